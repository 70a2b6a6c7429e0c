#!/usr/bin/env bash
# Rebuild the Python extension in place after a Rust change (for an editable install:
# `pip install -e .` once, then this script), without re-running pip.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p dcnsim-py --quiet
# A new file renamed over the old one: a process still running the old extension keeps its
# mapping (copying over it in place killed such a process with SIGBUS).
cp "${CARGO_TARGET_DIR:-target}/release/lib_core.so" python/dcnsim/_core.abi3.so.new
mv -f python/dcnsim/_core.abi3.so.new python/dcnsim/_core.abi3.so
