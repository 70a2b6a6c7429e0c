#!/usr/bin/env bash
# Engine cost of the current checkout against an earlier commit (default HEAD~1), side by
# side: callgrind instruction counts (repeatable on a shared machine) and alternating wall
# times of `dcnsim-engine` on the same scenario. Extra arguments are engine overrides for
# BOTH builds (e.g. tcp.limited_transmit=false to run the old model on the new engine).
#
#   scripts/bench-compare.sh [BASE_COMMIT] [key=value ...]
#
# Needs valgrind. Builds BASE in a temporary git worktree with its own target directory.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:-HEAD~1}
shift || true
SCEN=scenarios/bench-incast.toml
ARGS=(sim.duration='"0.5s"' "$@")
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
ci_old=$(count "$OLD" "$SCEN" sim.duration='"0.5s"')
ev_old=$(events "$OLD" "$SCEN" sim.duration='"0.5s"')
ci_new=$(count "$NEW" "$SCEN" "${ARGS[@]}")
ev_new=$(events "$NEW" "$SCEN" "${ARGS[@]}")
echo "instructions: base $ci_old ($ev_old events), current $ci_new ($ev_new events)"
python3 - "$ci_old" "$ev_old" "$ci_new" "$ev_new" <<'PY'
import sys
co, eo, cn, en = map(float, sys.argv[1:])
print(f"current/base: instructions {cn / co:.3f}, per event {(cn / en) / (co / eo):.3f}")
PY
echo "== wall time, alternating, 20 s simulated, best of 3"
best_old=999; best_new=999
for _ in 1 2 3; do
  for which in old new; do
    bin=$OLD; extra=(); [ $which = new ] && bin=$NEW && extra=("$@")
    t0=$(date +%s.%N); "$bin" "$SCEN" "${extra[@]}" >/dev/null; t1=$(date +%s.%N)
    t=$(python3 -c "print($t1 - $t0)")
    if [ $which = old ]; then best_old=$(python3 -c "print(min($best_old, $t))");
    else best_new=$(python3 -c "print(min($best_new, $t))"); fi
  done
done
python3 -c "print(f'wall: base {$best_old:.3f} s, current {$best_new:.3f} s, ratio {$best_new / $best_old:.3f}')"
