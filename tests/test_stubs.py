"""``python/dcnsim/_core.pyi`` matches the compiled engine: mypy's stubtest imports
``dcnsim._core`` and compares every name, parameter and default with the stub.

PyO3 gives each function a ``__text_signature__``, so stubtest sees the real parameters
of the abi3 module and no allowlist is needed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import dcnsim
import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing
import pytest


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (it is in the `test` extra: pip install .[test])")
def test_core_stub_matches_the_extension(tmp_path: Path) -> None:
    # Check the same dcnsim the tests import (an install, or the source tree on PYTHONPATH);
    # run in tmp_path so mypy's cache stays out of the repository.
    package_root = str(Path(dcnsim.__file__).resolve().parents[1])
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH"))
                                         if p)}
    proc = subprocess.run([sys.executable, "-m", "mypy.stubtest", "dcnsim._core"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
