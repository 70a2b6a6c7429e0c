#!/usr/bin/env bash
# Install dcnsim from this checkout and run every test: Rust (fmt, clippy, unit and scenario
# tests) and Python (ruff, pytest). This is the command README.md shows and .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
if ! command -v tshark >/dev/null; then
  # tests/test_pcap.py reads captures with tshark (Debian package; CI runs as root).
  echo "== apt-get install tshark"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null
fi
if ! command -v chromium >/dev/null; then
  # tests/test_catalog_e2e.py loads the catalog page of `dcnsim reproduce --all` in headless
  # Chromium (Debian package).
  echo "== apt-get install chromium"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
echo "== install (pip install .[test]; builds the Rust extension with maturin)"
python3 -m pip install --quiet --disable-pip-version-check ".[test]"
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo test"
cargo test --workspace --quiet
echo "== ruff"
python3 -m ruff check python tests benches
echo "== pytest (includes \`dcnsim reproduce --all --quick\`: the whole catalog, about a minute)"
# The repo root has no dcnsim/ folder, so the installed package is what gets imported.
python3 -m pytest -q -p no:cacheprovider
