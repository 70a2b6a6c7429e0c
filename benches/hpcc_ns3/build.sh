#!/bin/sh
# Build the HPCC authors' ns-3 simulator (alibaba-edu/High-Precision-Congestion-Control,
# folder simulation/, ns-3 with their RDMA NIC, switch MMU and DCQCN/HPCC/TIMELY/DCTCP) at a
# pinned commit, optimized, for `benches/hpcc_ns3/run.py` and `compare.py`.
#
#   benches/hpcc_ns3/build.sh [OUTDIR]       (default $HOME/.cache/dcnsim/hpcc-ns3)
#   HPCC_SRC=URL-or-path benches/hpcc_ns3/build.sh   (another clone or mirror)
#   PYTHON2=/path/to/python2.7 JOBS=2 NICE=10 benches/hpcc_ns3/build.sh
#
# Result: OUTDIR/src/simulation/build/scratch/third and its shared libraries next to it
# (run.py sets LD_LIBRARY_PATH), and OUTDIR/src/traffic_gen (the size CDFs run.py reads).
# Nothing of the fork is kept in this repository. Never run by CI.
#
# Steps (README.md in this folder says why):
#   1. clone HPCC_SRC into OUTDIR/src and check out the pinned commit;
#   2. `waf configure` with Python 2 (the fork's waf 1.7 does not run on Python 3), only the
#      modules scratch/third.cc links (point-to-point, internet, applications and what they
#      pull in), optimized profile (-O3 -march=native), no Python bindings, tests or
#      examples;
#   3. `waf build` under nice with at most JOBS compile jobs;
#   4. a check that scratch/third starts and reads a configuration.
# gcc 12.2 compiles the pinned commit without source changes: the fork's own
# waf-tools/cflags.py already drops ns-3's -Werror, which is what its README's "gcc > 5
# fails" note is about. The remaining warnings (deprecated std::unary_function, four
# functions that can reach their end without a return on paths the runs never take) are
# left as they are. Re-running skips the clone and configure; delete OUTDIR/src to start
# over.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HOME/.cache/dcnsim/hpcc-ns3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
COMMIT=9f4be2a9ead8a90e8bf732c66bd758c00e58e5be
SRC=${HPCC_SRC:-https://github.com/alibaba-edu/High-Precision-Congestion-Control.git}
JOBS=${JOBS:-2}
NICE=${NICE:-10}

say() { echo "hpcc-ns3 build: $*" >&2; }
for tool in git g++ nice; do
    command -v "$tool" >/dev/null 2>&1 || { say "$tool not found"; exit 3; }
done

# ---- Python 2 for waf ------------------------------------------------------------------
find_python2() {
    for p in "${PYTHON2:-}" python2.7 python2 "$HOME"/.pyenv/versions/2.7*/bin/python; do
        [ -n "$p" ] || continue
        if command -v "$p" >/dev/null 2>&1 &&
           "$p" -c 'import sys; sys.exit(sys.version_info[0] != 2)' 2>/dev/null; then
            command -v "$p"
            return 0
        fi
    done
    return 1
}
PY2=$(find_python2) || { say "no Python 2.7 found (set PYTHON2=...); waf 1.7 needs it"; exit 3; }

# ---- source at the pinned commit -----------------------------------------------------
if [ ! -d "$OUT/src/.git" ]; then
    git clone -q --no-checkout "$SRC" "$OUT/src"
fi
cd "$OUT/src"
if ! git cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
    git fetch -q origin "$COMMIT"
fi
# A --no-checkout clone whose default branch is already at COMMIT has HEAD there and no
# files: check the tree out in that case too (reset --hard fills the index and the tree).
if [ "$(git rev-parse HEAD 2>/dev/null || true)" != "$COMMIT" ] || [ ! -f simulation/wscript ]; then
    git reset -q --hard "$COMMIT"
    rm -f "$OUT/src/simulation/.hpcc-configured"
fi
SIM="$OUT/src/simulation"
cd "$SIM"

# ---- configure (once) ------------------------------------------------------------------
if [ ! -f .hpcc-configured ]; then
    nice -n "$NICE" "$PY2" ./waf configure --disable-python --disable-tests --disable-examples \
        -d optimized --enable-modules=point-to-point,applications,internet \
        >"$OUT/configure.log" 2>&1 || { say "configure failed, see $OUT/configure.log"; exit 1; }
    touch .hpcc-configured
fi

# ---- build -------------------------------------------------------------------------------
if ! nice -n "$NICE" "$PY2" ./waf build -j"$JOBS" >"$OUT/build.log" 2>&1; then
    grep -n -m 20 'error' "$OUT/build.log" >&2 || true
    say "build failed, see $OUT/build.log"
    exit 1
fi
PROG="$SIM/build/scratch/third"
[ -x "$PROG" ] || { say "no $PROG after the build"; exit 1; }

# ---- check: a configuration with no flows on the fork's 320-server fabric ----------------
CHECK="$OUT/check"
mkdir -p "$CHECK"
printf '0\n' >"$CHECK/flow.txt"
printf '0\n' >"$CHECK/trace.txt"
python3 - "$HERE" "$SIM/mix/fat.txt" "$CHECK" >"$CHECK/config.txt" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import run
w = sys.argv[3]
print(run.config_text("hp", 100, sys.argv[2], f"{w}/flow.txt", w, 0.001), end="")
EOF
(cd "$CHECK" && LD_LIBRARY_PATH="$SIM/build" nice -n "$NICE" "$PROG" "$CHECK/config.txt" \
    >"$CHECK/stdout.txt" 2>&1) || { say "scratch/third failed, see $CHECK/stdout.txt"; exit 1; }
grep -q '^maxRtt=' "$CHECK/stdout.txt" || { say "unexpected output, see $CHECK/stdout.txt"; exit 1; }
echo "built $PROG ($(git -C "$OUT/src" rev-parse --short HEAD), $(grep '^maxRtt=' "$CHECK/stdout.txt"))"
echo "run: python3 $HERE/run.py gen --flows 10000 --out /tmp/flows.txt"
echo "     python3 $HERE/run.py run --cc hp --flows-file /tmp/flows.txt --build-dir $OUT"
