"""Profile-guided optimisation: the rustc wrapper `scripts/rustc-pgo` that optimised
builds of the workspace's crates go through (`.cargo/config.toml`), and the profile it uses.

The wrapper is driven with a stand-in rustc that prints the arguments it was given, so each
rule is checked exactly: which builds get the profile, the pinned `-C metadata`, the LLVM
version guard and the two switches. That the profile changes no output is checked by
`scripts/compare-builds.py --tables` (docs/performance.md), not here: it needs two builds.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WRAPPER = ROOT / "scripts" / "rustc-pgo"
PGO = ROOT / "crates" / "dcnsim" / "pgo"
PROFILE = PGO / "dcnsim.profdata"


def fake_rustc(tmp_path: Path, llvm: str) -> Path:
    """A rustc stand-in: `-vV` reports LLVM `llvm`; otherwise it prints one argument per line."""
    exe = tmp_path / "rustc"
    exe.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = -vV ]; then echo "rustc 1.0.0"; '
        f'echo "LLVM version: {llvm}"; exit 0; fi\n'
        'for a in "$@"; do echo "$a"; done\n'
    )
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def recorded_llvm() -> str:
    return (PGO / "llvm-version").read_text().strip()


ARGS = ["--crate-name", "dcnsim", "--edition=2021", "crates/dcnsim/src/lib.rs",
        "-C", "opt-level=3", "-C", "metadata=1f2e3d4c5b6a7980", "-C",
        "extra-filename=-0123456789abcdef"]


def wrap(tmp_path: Path, args: list[str], llvm: str | None = None, **env: str) -> list[str]:
    """The arguments the stand-in rustc receives when cargo calls the wrapper with `args`."""
    rustc = fake_rustc(tmp_path, llvm if llvm is not None else recorded_llvm() + ".1.2")
    e = {k: v for k, v in os.environ.items() if not k.startswith("DCNSIM_PGO")}
    e.update(env)
    out = subprocess.run([str(WRAPPER), str(rustc), *args], capture_output=True, text=True,
                         env=e, check=True).stdout
    return out.splitlines()


def test_the_profile_is_committed_for_the_installed_rustc():
    # A missing profile, or one written by another LLVM major version, leaves every build
    # without PGO, silently: retrain with scripts/pgo-train.sh.
    assert PROFILE.is_file() and PROFILE.stat().st_size > 10_000
    rustc = shutil.which("rustc")
    if rustc is None:
        pytest.skip("no rustc on PATH")
    vv = subprocess.run([rustc, "-vV"], capture_output=True, text=True, check=True).stdout
    llvm = next(line.split(":")[1].strip() for line in vv.splitlines()
                if line.startswith("LLVM version:"))
    assert llvm.split(".")[0] == recorded_llvm(), "run scripts/pgo-train.sh"


def test_release_builds_use_the_profile_with_pinned_metadata(tmp_path):
    got = wrap(tmp_path, ARGS)
    want = [a if not a.startswith("metadata=") else "metadata=dcnsim-pgo" for a in ARGS]
    assert got == [*want, f"-Cprofile-use={PROFILE}"]
    # Only the metadata changed: the output file name (extra-filename) is cargo's.
    assert "extra-filename=-0123456789abcdef" in got


def test_the_joined_metadata_form_is_pinned_too(tmp_path):
    args = ["--crate-name", "dcnsim", "-Copt-level=3", "-Cmetadata=abc"]
    assert wrap(tmp_path, args)[:4] == ["--crate-name", "dcnsim", "-Copt-level=3",
                                        "-Cmetadata=dcnsim-pgo"]


def test_unoptimised_builds_pass_through(tmp_path):
    for level in ("0", "1", "s"):
        args = [a.replace("opt-level=3", f"opt-level={level}") for a in ARGS]
        assert wrap(tmp_path, args) == args


def test_another_llvm_major_version_gets_no_profile(tmp_path):
    other = str(int(recorded_llvm()) - 1) + ".0.0"
    assert wrap(tmp_path, ARGS, llvm=other) == ARGS


def test_switches(tmp_path):
    assert wrap(tmp_path, ARGS, DCNSIM_PGO="off") == ARGS
    got = wrap(tmp_path, ARGS, DCNSIM_PGO_GENERATE="/tmp/raw")
    assert got[-1] == "-Cprofile-generate=/tmp/raw"
    assert "metadata=dcnsim-pgo" in got
