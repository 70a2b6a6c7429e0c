#!/usr/bin/env python3
"""Print the digest of the engine sources a PGO profile is trained on.

`scripts/pgo-train.sh` records it in crates/dcnsim/pgo/sources.sha256; the speed gate
(`scripts/bench-compare.sh`) warns when the sources have changed since, because functions
whose control flow changed are then compiled without the profile (correct, slower).
The digest covers every file under crates/dcnsim/src and the crate's Cargo.toml, by path
and content, in path order.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def digest(root: Path = ROOT) -> str:
    crate = root / "crates" / "dcnsim"
    files = sorted(p for p in (crate / "src").rglob("*") if p.is_file())
    files.append(crate / "Cargo.toml")
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


if __name__ == "__main__":
    sys.stdout.write(digest() + "\n")
