#!/usr/bin/env bash
# Train the profile-guided optimisation profile (crates/dcnsim/pgo/dcnsim.profdata) that
# optimised builds use (scripts/rustc-pgo). Run it after changing the engine: functions whose
# control flow changed since the last training are compiled without the profile (still
# correct, only slower).
#
#   scripts/pgo-train.sh [CUT]     CUT: simulated time per scenario, default 0.1s
#
# 1. builds `dcnsim-engine` instrumented (its own target directory);
# 2. runs every scenario of scenarios/, its base point cut to CUT of simulated time, twice
#    (event-loop prefetching forced on and off: DCNSIM_PREFETCH) — the catalog, not a
#    benchmark: the star incasts, leaf-spine fabrics with multi-queue ports, QCN,
#    PAUSE/PFC, CBR, workloads; each run counts branches and calls;
# 3. merges the counts with the llvm-profdata of this rustc's LLVM (rustup's llvm-tools
#    component, added if missing), every scenario with the same weight (below), and
#    records that LLVM's major version and the digest of the sources it was trained on
#    (scripts/pgo_sources.py) beside the profile.
# Training is repeatable: two trainings of the same sources differ in a few dozen of their
# billions of counts (set-up code that iterates hash maps with random seeds).
set -euo pipefail
cd "$(dirname "$0")/.."
CUT=${1:-0.1s}
sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
PROFDATA="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$PROFDATA" ]; then
  rustup component add llvm-tools
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo "== building the instrumented engine"
DCNSIM_PGO_GENERATE="$WORK/raw" CARGO_TARGET_DIR="$WORK/target" \
  cargo build --release --quiet --bin dcnsim-engine
ENGINE="$WORK/target/release/dcnsim-engine"
echo "== training on scenarios/*.toml, $CUT each"
# Each scenario's counts are merged on their own, then weighted so that every scenario
# weighs the same in the profile. Summed as they come, the few scenarios that run the most
# events in CUT (the 144-host fabrics) would set the branch weights of every function they
# share with the others (the event loop, dispatch, TCP), and most of the catalog is star
# incasts.
mkdir -p "$WORK/per"
inputs=()
for s in scenarios/*.toml; do
  name=$(basename "$s" .toml)
  # The RDMA scenarios are left out: with them, at the same weight as the rest, the TCP
  # cuts of the speed gate lost 2-3 % of the profile's gain (docs/performance.md, "Profile-
  # guided optimisation"); RoCE runs are compiled with the TCP and layer-2 profile.
  if grep -q '^transport = "roce"' "$s"; then
    continue
  fi
  # Twice: with the event loop's prefetching forced on and off, so that both copies of the
  # loop are trained whatever this machine's L2 (the run chooses one, `prefetch_pays`).
  for pf in on off; do
    if ! DCNSIM_PREFETCH=$pf LLVM_PROFILE_FILE="$WORK/raw/$name/%p.profraw" \
      "$ENGINE" "$s" "sim.duration=\"$CUT\"" >/dev/null 2>"$WORK/err"; then
      echo "   $s: $(tail -1 "$WORK/err")"
    fi
  done
  "$PROFDATA" merge -o "$WORK/per/$name.profdata" "$WORK/raw/$name"
  total=$("$PROFDATA" show "$WORK/per/$name.profdata" | sed -n 's/^Total count: //p')
  inputs+=("${total:-0} $WORK/per/$name.profdata")
done
# Weight of each: the largest total over its own, rounded (llvm-profdata takes whole
# weights), so the scenario with the most counts weighs 1.
max=$(printf '%s\n' "${inputs[@]}" | sort -n | tail -1 | cut -d' ' -f1)
args=()
for i in "${inputs[@]}"; do
  read -r total file <<<"$i"
  [ "$total" -gt 0 ] || continue
  args+=("--weighted-input=$(((max + total / 2) / total)),$file")
done
mkdir -p crates/dcnsim/pgo
"$PROFDATA" merge -o crates/dcnsim/pgo/dcnsim.profdata "${args[@]}"
rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p' >crates/dcnsim/pgo/llvm-version
python3 scripts/pgo_sources.py >crates/dcnsim/pgo/sources.sha256
echo "== wrote crates/dcnsim/pgo/dcnsim.profdata ($(du -k crates/dcnsim/pgo/dcnsim.profdata | cut -f1) KiB), LLVM $(cat crates/dcnsim/pgo/llvm-version), ${#args[@]} scenarios"
