#!/bin/sh
# Build the TCN authors' ns-2 simulator (HKUST-SING/TCN-NS2 on top of HKUST-SING/PIAS-NS2's
# pFabric.patch) from Debian's ns-2.35 source, for `benches/tcn_ns2/run.py`.
#
#   benches/tcn_ns2/build.sh [OUTDIR]        (default $HOME/.cache/dcnsim/tcn-ns2)
#   TCN_NS2_SRC=path PIAS_NS2_SRC=path benches/tcn_ns2/build.sh   (existing checkouts)
#
# Result: OUTDIR/ns (the simulator) and OUTDIR/scripts (TCN-NS2's scripts/ folder, which
# run.py copies into a temporary directory per run). Nothing of the peers' code is kept in
# this repository: every step below fetches it and edits the copy under OUTDIR.
#
# Steps (see README.md in this folder for why each one is needed):
#   1. ns-2.35 source: `apt-get source --download-only ns2` (Debian 2.35+dfsg); only the
#      upstream tarball is used, not Debian's packaging (which builds with CMake).
#      A bookworm deb-src entry is added under /etc/apt/sources.list.d/ if none exists,
#      and the build dependencies are installed with `apt-get build-dep ns2` (root only).
#   2. PIAS-NS2's pFabric.patch (written against ns-2.34), minus its tcp.{cc,h} and
#      tcp-full.{cc,h} parts, applied with `patch -p2 --fuzz=3`; those four files are
#      then replaced by TCN-NS2's versions, and TCN-NS2's queue/ files are added.
#   3. configure against a small prefix of symbolic links that lays out Debian's
#      multiarch Tcl/Tk/OTcl/TclCL files the way ns-2.35's configure searches for them.
#   4. Makefile: queue/prio_dwrr.o and queue/prio_wfq.o added to the object list; CCOPT
#      set for gcc 12 and Tcl 8.6.
#   5. Source fixes for gcc 12 and Debian's TclCL (three small, idempotent edits).
#   6. make -j2 ns, then a Tcl check that creates a Queue/PrioDwrr.
# Re-running resumes at the make step; delete OUTDIR/ns-2.35 to start over.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HOME/.cache/dcnsim/tcn-ns2}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
NSDIR="$OUT/ns-2.35"
JOBS=${JOBS:-2}

say() { echo "tcn-ns2 build: $*" >&2; }
need() { command -v "$1" >/dev/null 2>&1 || { say "$1 not found"; exit 3; }; }
for tool in git make gcc g++ patch tar xz awk sed; do need "$tool"; done

# ---- peer sources (git) -------------------------------------------------------------
get_repo() { # name env-value -> prints the checkout path
    if [ -n "$2" ]; then
        [ -d "$2" ] || { say "$1 source $2 is not a directory"; exit 3; }
        (cd "$2" && pwd)
        return
    fi
    if [ ! -d "$OUT/src/$1/.git" ]; then
        mkdir -p "$OUT/src"
        git clone -q "https://github.com/HKUST-SING/$1" "$OUT/src/$1"
    fi
    echo "$OUT/src/$1"
}
TCN=$(get_repo TCN-NS2 "${TCN_NS2_SRC:-}")
PIAS=$(get_repo PIAS-NS2 "${PIAS_NS2_SRC:-}")
for f in "$PIAS/pFabric.patch" "$TCN/queue/prio_dwrr.cc" "$TCN/tcp/tcp-full.cc" \
         "$TCN/scripts/spine_empirical_pias_diffserv.tcl"; do
    [ -f "$f" ] || { say "missing $f"; exit 3; }
done

# ---- build dependencies and the ns-2.35 source (Debian) ----------------------------
have_deps() {
    [ -f /usr/include/tcl8.6/tcl-private/generic/tclInt.h ] &&
    [ -f /usr/include/otcl.h ] && [ -f /usr/include/tclcl/tclcl.h ] &&
    [ -x /usr/bin/tcl2c++ ] && [ -f /usr/include/tcl8.6/tk.h ] &&
    command -v tclsh8.6 >/dev/null 2>&1
}
has_deb_src() {
    grep -rqsE '^[[:space:]]*(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/
}
ORIG=$(ls "$OUT"/dl/ns2_2.35*.orig.tar.* 2>/dev/null | head -n 1 || true)
if [ -z "$ORIG" ] || ! have_deps; then
    need apt-get
    if [ "$(id -u)" != 0 ]; then
        say "run as root once (apt-get build-dep/source ns2), or install the deps yourself"
        exit 3
    fi
    if ! has_deb_src; then
        say "adding a deb-src entry for bookworm: /etc/apt/sources.list.d/dcnsim-deb-src.sources"
        cat >/etc/apt/sources.list.d/dcnsim-deb-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    fi
    apt-get update -qq
    if ! have_deps; then
        DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -qq ns2 >/dev/null
    fi
    mkdir -p "$OUT/dl"
    # The orig tarball is all that is used; a failed download of Debian's packaging
    # tarball is not fatal.
    (cd "$OUT/dl" && apt-get source --download-only -qq ns2) || true
    ORIG=$(ls "$OUT"/dl/ns2_2.35*.orig.tar.* 2>/dev/null | head -n 1 || true)
    [ -n "$ORIG" ] || { say "apt-get source ns2 gave no orig tarball"; exit 3; }
fi

# ---- a configure-friendly prefix for Debian's Tcl/Tk/OTcl/TclCL --------------------
MA=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
LIBD=/usr/lib/$MA
PFX="$OUT/tclroot"
rm -rf "$PFX"
mkdir -p "$PFX/include" "$PFX/lib" "$PFX/bin"
for h in /usr/include/tcl8.6/*.h /usr/include/tcl8.6/tcl-private/generic/*.h \
         /usr/include/tcl8.6/tcl-private/unix/*.h /usr/include/tcl8.6/tk-private/generic/*.h \
         /usr/include/tcl8.6/tk-private/unix/*.h /usr/include/otcl.h /usr/include/tclcl/*.h; do
    ln -sf "$h" "$PFX/include/"
done
ln -sf "$LIBD/libtcl8.6.so" "$PFX/lib/libtcl8.6.so"
ln -sf "$LIBD/libtk8.6.so" "$PFX/lib/libtk8.6.so"
ln -sf "$LIBD/libotcl.so" "$PFX/lib/libotcl1.14.so"   # configure asks for -lotcl1.14
ln -sf "$LIBD/libtclcl.so" "$PFX/lib/libtclcl.so"
ln -sf /usr/share/tcltk/tcl8.6 "$PFX/lib/tcl8.6"      # init.tcl, http1.0/http.tcl
ln -sf /usr/share/tcltk/tk8.6 "$PFX/lib/tk8.6"
ln -sf /usr/bin/tcl2c++ "$PFX/bin/tcl2c++"

# ---- unpack, patch, configure (once) -------------------------------------------------
if [ ! -f "$NSDIR/.tcn-prepared" ]; then
    rm -rf "$NSDIR"
    tar -xf "$ORIG" -C "$OUT"
    [ -d "$NSDIR" ] || { say "$ORIG did not unpack to ns-2.35/"; exit 3; }
    cd "$NSDIR"
    # PIAS-NS2's patch without the four TCP files that TCN-NS2 replaces wholesale.
    awk '/^diff /{ skip = ($NF ~ /\/tcp\/tcp(-full)?\.(cc|h)$/) } !skip' \
        "$PIAS/pFabric.patch" >"$OUT/pias-without-tcp.patch"
    patch -s -p2 --fuzz=3 --ignore-whitespace <"$OUT/pias-without-tcp.patch"
    cp "$TCN/tcp/tcp.cc" "$TCN/tcp/tcp.h" "$TCN/tcp/tcp-full.cc" "$TCN/tcp/tcp-full.h" tcp/
    cp "$TCN/queue/prio_dwrr.cc" "$TCN/queue/prio_dwrr.h" \
       "$TCN/queue/prio_wfq.cc" "$TCN/queue/prio_wfq.h" queue/
    ./configure -q --with-tcl="$PFX" --with-tcl-ver=8.6 --with-tk="$PFX" --with-tk-ver=8.6 \
        --with-otcl="$PFX" --with-tclcl="$PFX" --enable-stl >"$OUT/configure.log" 2>&1 ||
        { say "configure failed, see $OUT/configure.log"; exit 1; }
    # The scheduler objects. ns-2.35's configure keeps -O2 only if gcc's minor version is
    # >= 8 (a test written for gcc 2.8+/egcs), so on gcc 12.2 it builds unoptimised:
    # optimisation is set here. Tcl 8.6 hides interp->result unless
    # USE_INTERP_RESULT is defined (TclCL's header uses it); gcc 12 defaults to C++17,
    # which rejects `register` and some old casts.
    sed -i 's|^\(\t*queue/queue.o queue/drop-tail.o\)|\1 queue/prio_dwrr.o queue/prio_wfq.o|' Makefile
    grep -q 'queue/prio_dwrr.o' Makefile || { say "Makefile object list not found"; exit 1; }
    sed -i 's|^CCOPT\t*=.*|CCOPT\t= -O2 -std=gnu++14 -fpermissive -w -Wno-write-strings -DUSE_INTERP_RESULT -DUSE_INTERP_ERRORLINE|' Makefile
    touch .tcn-prepared
fi

# ---- source fixes for gcc 12 (idempotent: a fixed file no longer matches) -------------
cd "$NSDIR"
# mdart: with <string> included, `hash(x)` is ambiguous between ns's ::hash and std::hash.
! grep -q '= hash(' mdart/mdart_adp.cc || sed -i 's/= hash(/= ::hash(/' mdart/mdart_adp.cc
# TCN-NS2's tcp.h (from ns-2.34) has TcpAgent::reset() protected; ns-2.35's tmix calls it,
# and 2.35 made it public. Only its access changes here (no code the simulation runs).
grep -q 'tcn-ns2 build: reset' tcp/tcp.h ||
    sed -i '0,/^\tvoid reset();$/s//public:\t\/* tcn-ns2 build: reset() public as in ns-2.35, tmix calls it *\/\n\tvoid reset();\nprotected:/' tcp/tcp.h
grep -q 'tcn-ns2 build: reset' tcp/tcp.h || { say "tcp.h: TcpAgent::reset() not found"; exit 1; }
# Debian's TclCL is built without HAVE_INT64, so it lacks TclObject::bind(const char*,
# int64_t*), which ns (configured with HAVE_INT64) declares and calls for the 64-bit
# counters of QueueMonitor and PackMimeOpenLoop. Neither is used by the TCN script; this
# definition binds the counter's low 32 bits (x86-64 is little-endian) so that ns links.
[ -f common/tcn-int64-bind.cc ] || cat >common/tcn-int64-bind.cc <<'EOF'
// Generated by benches/tcn_ns2/build.sh (see there): bind a 64-bit counter's low half.
#include "config.h"
#if defined(HAVE_INT64)
void TclObject::bind(const char* var, int64_t* val)
{
	bind(var, reinterpret_cast<int*>(val));
}
#endif
EOF
grep -q 'common/tcn-int64-bind.o' Makefile ||
    sed -i 's|^\(\t*queue/queue.o queue/drop-tail.o\)|\1 common/tcn-int64-bind.o|' Makefile
grep -q 'common/tcn-int64-bind.o' Makefile || { say "Makefile object list not found"; exit 1; }

# ---- build ----------------------------------------------------------------------------
if ! make -j"$JOBS" ns >"$OUT/make.log" 2>&1; then
    grep -n -m 20 'error' "$OUT/make.log" >&2 || true
    say "make failed, see $OUT/make.log"
    exit 1
fi
cp ns "$OUT/ns"
rm -rf "$OUT/scripts"
cp -r "$TCN/scripts" "$OUT/scripts"

# ---- check ----------------------------------------------------------------------------
cat >"$OUT/hello.tcl" <<'EOF'
set ns [new Simulator]
# TCN-NS2 adds no ns-default.tcl entries for its schedulers: set them as its script does.
foreach {var val} {prio_queue_num_ 1 dwrr_queue_num_ 7 mean_pktsize_ 1500 port_thresh_ 65
        marking_scheme_ 2 mqecn_alpha_ 0.75 mqecn_interval_bytes_ 1500 link_capacity_ 10Gb
        debug_ false} {
    Queue/PrioDwrr set $var $val
}
set q [new Queue/PrioDwrr]
$ns at 0.001 "puts \"ns [ns-version] ok, PrioDwrr port_thresh_ [$q set port_thresh_]\"; exit 0"
$ns run
EOF
"$OUT/ns" "$OUT/hello.tcl"
rev() { [ -d "$1/.git" ] && git -C "$1" rev-parse --short HEAD || echo "not a git checkout"; }
echo "built $OUT/ns (TCN-NS2: $(rev "$TCN"); PIAS-NS2: $(rev "$PIAS"))"
echo "run: python3 $HERE/run.py --fig 10 --load 0.9 --scheme tcn --ns $OUT/ns --scripts $OUT/scripts"
