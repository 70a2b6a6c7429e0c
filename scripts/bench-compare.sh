#!/usr/bin/env bash
# Engine cost of the current checkout against an earlier commit (default HEAD~1), side by
# side: callgrind instruction counts (repeatable on a shared machine) and alternating wall
# times of `dcnsim-engine` on the same scenario (WALL_REPS pairs, default 3). Extra arguments are engine overrides for
# BOTH builds (e.g. tcp.limited_transmit=false to run the old model on the new engine).
#
#   scripts/bench-compare.sh [BASE_COMMIT] [key=value ...]
#
# BENCH_SCENARIO (default scenarios/bench-incast.toml) and BENCH_CUT (default
# sim.duration="0.5s", given to both builds) pick another workload, e.g. the 144-host
# fabric point cut to 300 messages:
#   BENCH_SCENARIO=scenarios/tcn-fig10.toml BENCH_CUT=apps.0.count=300 scripts/bench-compare.sh BASE
#
# Needs valgrind. Builds BASE in a temporary git worktree with its own target directory.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:-HEAD~1}
shift || true
SCEN=${BENCH_SCENARIO:-scenarios/bench-incast.toml}
CUT=${BENCH_CUT:-sim.duration=\"0.5s\"}
ARGS=("$CUT" "$@")
# Wall time: bench-incast runs whole (20 s simulated); another scenario runs its cut.
WALL=(); [ -n "${BENCH_SCENARIO:-}" ] && WALL=("$CUT")
WT=$(mktemp -d)
trap 'git worktree remove --force "$WT" >/dev/null 2>&1 || true' EXIT
git worktree add --detach "$WT" "$BASE" >/dev/null
echo "== building base $BASE and current"
(cd "$WT" && CARGO_TARGET_DIR="$WT/target" cargo build --release --quiet --bin dcnsim-engine)
cargo build --release --quiet --bin dcnsim-engine
OLD="$WT/target/release/dcnsim-engine"
NEW=target/release/dcnsim-engine
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
events() { "$@" | awk -F'[][]' '/^summary.events / {print $2}'; }
# The base engine may not know the overrides: it runs the scenario as is.
ci_old=$(count "$OLD" "$SCEN" "$CUT")
ev_old=$(events "$OLD" "$SCEN" "$CUT")
ci_new=$(count "$NEW" "$SCEN" "${ARGS[@]}")
ev_new=$(events "$NEW" "$SCEN" "${ARGS[@]}")
echo "instructions: base $ci_old ($ev_old events), current $ci_new ($ev_new events)"
python3 - "$ci_old" "$ev_old" "$ci_new" "$ev_new" <<'PY'
import sys
co, eo, cn, en = map(float, sys.argv[1:])
print(f"current/base: instructions {cn / co:.3f}, per event {(cn / en) / (co / eo):.3f}")
PY
REPS=${WALL_REPS:-3}
echo "== wall time, alternating base/current, $REPS pairs (WALL_REPS)"
times=()
for _ in $(seq "$REPS"); do
  for which in old new; do
    bin=$OLD; extra=("${WALL[@]}"); [ $which = new ] && bin=$NEW && extra=("${WALL[@]}" "$@")
    t0=$(date +%s.%N); "$bin" "$SCEN" "${extra[@]}" >/dev/null; t1=$(date +%s.%N)
    times+=("$(python3 -c "print($t1 - $t0)")")
  done
done
# Best of each side, and the median of the ratios of neighbouring runs: a pair ran within
# seconds of each other, so background load that comes and goes mostly cancels in it.
python3 - "${times[@]}" <<'PY'
import statistics, sys
t = list(map(float, sys.argv[1:]))
old, new = t[0::2], t[1::2]
ratios = sorted(n / o for o, n in zip(old, new))
print(f"wall: base best {min(old):.3f} s, current best {min(new):.3f} s, "
      f"ratio of bests {min(new) / min(old):.3f}")
print(f"wall: ratio per pair median {statistics.median(ratios):.3f} "
      f"(range {ratios[0]:.3f}-{ratios[-1]:.3f}, {len(ratios)} pairs)")
PY
