#!/bin/sh
# Build htsim (Broadcom/csg-htsim, BSD 2-clause) at the commit docs/performance.md measured,
# and our star-incast driver against its library, for `benches/peers.py`.
#
#   benches/htsim/build.sh                 -> benches/htsim/build/htsim_star_incast
#   HTSIM_SRC=URL-or-path benches/htsim/build.sh   (another clone or mirror of htsim)
#
# Needs git, make and g++ (C++11). htsim is fetched into benches/htsim/build/src (ignored
# by git) and built with its own Makefile and flags (-O3); the driver with the same
# language level and -O3. Never run by CI. Prints the `--htsim` template for peers.py.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE/build"
COMMIT=841d9e7be46bb968eece766aa4b6c044c7799f67
SRC=${HTSIM_SRC:-https://github.com/Broadcom/csg-htsim.git}
for tool in git make g++; do
    command -v "$tool" >/dev/null 2>&1 || { echo "htsim build: $tool not found" >&2; exit 3; }
done
mkdir -p "$OUT"
if [ ! -d "$OUT/src/.git" ]; then
    git clone -q --no-checkout "$SRC" "$OUT/src"
fi
cd "$OUT/src"
if ! git cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
    git fetch -q origin "$COMMIT"
fi
# Only sim/ (htsim's library) is needed; the experiment folders are large.
git checkout -q "$COMMIT" -- sim
make -C "$OUT/src/sim" -j2 libhtsim.a >/dev/null
g++ -std=c++11 -O3 -Wall -I"$OUT/src/sim" \
    "$HERE/htsim_star_incast.cpp" "$OUT/src/sim/libhtsim.a" \
    -o "$OUT/htsim_star_incast"
echo "built $OUT/htsim_star_incast (htsim $COMMIT)"
echo "peers.py finds it there; or pass:"
echo "  --htsim '$OUT/htsim_star_incast -n {servers} -rate_gbps {rate_gbps} -time_s {duration} -workload {workload}'"
