#!/usr/bin/env bash
# Speed gate: the engine of the current checkout against an earlier commit (default HEAD~1),
# side by side on the incast and fabric cuts. For each cut it prints
#   - instructions and simulated L1 data misses (`valgrind --tool=cachegrind`: the same for
#     the same binary and input whatever else the machine does; the misses stand for the
#     memory-bound fabric path, where instructions alone say little), and the events run;
#   - wall times of `dcnsim-engine`, base and current alternately (WALL_REPS pairs, default
#     3), and the median of the per-pair ratios (a pair runs within seconds, so background
#     load that comes and goes mostly cancels in it).
# Run it before merging anything that touches the engine; record the figures in
# docs/performance.md.
#
#   scripts/bench-compare.sh [BASE_COMMIT] [key=value ...]
#
# Cuts (each "SCENARIO|OVERRIDE ..."), unless BENCH_SCENARIO picks one:
#   incast-1g   scenarios/bench-incast.toml, 0.5 s (8 senders, SRUs; whole 20 s for wall time)
#   incast-10g  the same at 10 Gb/s with long-lived senders, 0.3 s
#   fabric      scenarios/tcn-fig10.toml cut to 300 messages (144 hosts, 8 queues per port)
#   roce        scenarios/hpcc-fattree.toml cut to 1 000 messages (the HPCC paper's 320-server
#               fat-tree, RoCEv2 queue pairs under HPCC with INT, PFC; a base older than the
#               scenario's keys cannot run it)
# BENCH_SCENARIO=FILE and BENCH_CUT="key=value" run that one cut instead. Extra arguments
# are engine overrides for the current build only (the base may not know them: it runs the
# cut as is), e.g. tcp.limited_transmit=false to run the old model on the new engine.
#
# Needs valgrind. Builds BASE in a temporary git worktree with its own target directory.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:-HEAD~1}
shift || true
REPS=${WALL_REPS:-3}
if [ -n "${BENCH_SCENARIO:-}" ]; then
  CUTS=("custom|$BENCH_SCENARIO|${BENCH_CUT:-}")
else
  CUTS=(
    'incast-1g|scenarios/bench-incast.toml|sim.duration="0.5s"'
    'incast-10g|scenarios/bench-incast.toml|sim.duration="0.3s" topology.link_rate="10Gbps" apps.0.sru="1000GB"'
    'fabric|scenarios/tcn-fig10.toml|apps.0.count=300'
    'roce|scenarios/hpcc-fattree.toml|apps.0.count=1000'
  )
fi
WT=$(mktemp -d)
trap 'git worktree remove --force "$WT" >/dev/null 2>&1 || true' EXIT
git worktree add --detach "$WT" "$BASE" >/dev/null
# Ratios measured on one CPU model need not hold on another: say which one this is.
echo "== machine: $(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | xargs), $(nproc) CPUs"
# Optimised builds use the committed PGO profile (scripts/rustc-pgo); one trained on other
# sources still works but leaves the changed functions unoptimised by it.
if [ -f crates/dcnsim/pgo/sources.sha256 ] &&
  [ "$(python3 scripts/pgo_sources.py)" != "$(cat crates/dcnsim/pgo/sources.sha256)" ]; then
  echo "== warning: the PGO profile was trained on other engine sources: run scripts/pgo-train.sh"
fi
echo "== building base $BASE and current"
(cd "$WT" && CARGO_TARGET_DIR="$WT/target" cargo build --release --quiet --bin dcnsim-engine)
cargo build --release --quiet --bin dcnsim-engine
OLD="$WT/target/release/dcnsim-engine"
NEW=target/release/dcnsim-engine
# "instructions L1-data-misses" of one run.
cost() {
  valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    awk '/I *refs:/ {gsub(",", "", $4); i = $4} /D1  misses:/ {gsub(",", "", $4); d = $4}
         END {print i, d}'
}
events() { "$@" | awk -F'[][]' '/^summary.events / {print $2}'; }
wall() {
  local t0 t1
  t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)"
}
report=()
for cut in "${CUTS[@]}"; do
  IFS='|' read -r name scen over <<<"$cut"
  read -r -a cutargs <<<"$over"
  # bench-incast's own cut runs whole (20 s simulated) for wall time; the others their cut.
  wallargs=("${cutargs[@]}")
  [ "$name" = incast-1g ] && wallargs=()
  echo "== $name: $scen ${cutargs[*]}"
  read -r io do_ < <(cost "$OLD" "$scen" "${cutargs[@]}")
  read -r in_ dn < <(cost "$NEW" "$scen" "${cutargs[@]}" "$@")
  eo=$(events "$OLD" "$scen" "${cutargs[@]}")
  en=$(events "$NEW" "$scen" "${cutargs[@]}" "$@")
  times=()
  for _ in $(seq "$REPS"); do
    times+=("$(wall "$OLD" "$scen" "${wallargs[@]}")")
    times+=("$(wall "$NEW" "$scen" "${wallargs[@]}" "$@")")
  done
  report+=("$(python3 - "$name" "$io" "$do_" "$eo" "$in_" "$dn" "$en" "${times[@]}" <<'PY'
import statistics, sys
name = sys.argv[1]
io, do, eo, inn, dn, en = map(float, sys.argv[2:8])
t = list(map(float, sys.argv[8:]))
old, new = t[0::2], t[1::2]
r = sorted(n / o for o, n in zip(old, new))
same = "same events" if eo == en else f"events {eo:.0f} -> {en:.0f}"
print(f"{name}: instructions {io / 1e6:.1f} M -> {inn / 1e6:.1f} M ({inn / io:.3f}x), "
      f"L1d misses {do / 1e6:.2f} M -> {dn / 1e6:.2f} M ({dn / do:.3f}x), {same}; "
      f"wall per-pair ratio median {statistics.median(r):.3f} "
      f"(range {r[0]:.3f}-{r[-1]:.3f}, {len(r)} pairs; best {min(old):.3f} -> {min(new):.3f} s)")
PY
)")
  echo "${report[-1]}"
done
echo "== current / base ($BASE)"
printf '%s\n' "${report[@]}"
