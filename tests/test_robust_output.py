"""Robustness, "Nothing lost" (docs/robustness.md): no empty output folder is left by a refused run,
files are written whole (temporary file, then rename), a sweep folder has one writer at a time, and
the exit codes 0 / 1 / 2 / 130 mean what README.md says."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import dcnsim.cli
import pytest
from dcnsim._tables import write_text_atomic
from dcnsim.runs import LOCK_FILE, RUNS_FILE

from .conftest import FakeCore, run_cli, sigint_default

Capture = pytest.CaptureFixture[str]


_run = run_cli


def test_a_run_refused_for_bad_input_leaves_no_empty_folder(
        fake_core: FakeCore, capsys: Capture, fig08: Path, tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "out"
    code, err = _run(capsys, "run", str(fig08), "--set", "report.kind=generic",
                     "--out", str(out))
    assert code == 2 and "cannot override the Python-owned table [report]" in err
    assert not (tmp_path / "a").exists(), "the refused run left its (empty) folders behind"


def test_a_folder_given_by_the_user_is_kept_when_the_run_is_refused(
        fake_core: FakeCore, capsys: Capture, fig08: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    code, _ = _run(capsys, "run", str(fig08), "--set", "sweep.x=[1]", "--out", str(out))
    assert code == 2 and out.is_dir()


def test_a_failed_write_keeps_the_old_file_and_no_temporary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "summary.csv"
    write_text_atomic(target, "old\n")

    def full_disk(self: Path, data: bytes) -> int:
        with self.open("wb") as fh:
            fh.write(data[:3])  # half written, then the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_text_atomic(target, "new contents\n")
    monkeypatch.undo()
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.csv"]


def test_a_second_sweep_is_refused_with_the_other_process_pid(
        fake_core: FakeCore, capsys: Capture, fig08: Path, tmp_path: Path) -> None:
    folder = tmp_path / "out" / "devkota-fig08-quick"
    folder.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         f"fh = open({str(folder / LOCK_FILE)!r}, 'a+')\n"
         "fcntl.flock(fh.fileno(), fcntl.LOCK_EX)\n"
         "fh.truncate(0); fh.write(f'{os.getpid()}\\n'); fh.flush()\n"
         "print('locked', flush=True)\n"
         "sys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        code, err = _run(capsys, "sweep", str(fig08), "--quick", "--out",
                         str(tmp_path / "out"))
        assert code == 2
        assert err.strip() == (f"dcnsim: error: another dcnsim sweep (pid {holder.pid}) is "
                               f"writing to {folder}; wait for it to finish or give another "
                               "--out")
        assert not (folder / RUNS_FILE).exists()
    finally:
        holder.communicate("")  # closes stdin: the holder exits and its flock goes with it
    code, _ = _run(capsys, "sweep", str(fig08), "--quick", "--out", str(tmp_path / "out"))
    assert code == 0 and (folder / RUNS_FILE).is_file()


def _interrupt(*args: object, **kw: object) -> object:
    raise KeyboardInterrupt


def _bug(*args: object, **kw: object) -> object:
    raise ZeroDivisionError("boom")


@pytest.mark.parametrize(("argv", "patch", "code", "message"), [
    (["validate", "{fig08}"], None, 0, ""),
    (["run", "{fig08}", "--out", "{tmp}/o"], _bug, 1,
     "dcnsim: error: internal error ZeroDivisionError: boom (this is a bug; please report it; "
     "DCNSIM_DEBUG=1 shows the traceback)"),
    (["validate", "{tmp}/nosuch.toml"], None, 2,
     "dcnsim: error: scenario file {tmp}/nosuch.toml does not exist"),
    (["run", "{fig08}", "--out", "{tmp}/o"], _interrupt, 130, "dcnsim: error: interrupted"),
], ids=["ok", "run-failed", "bad-input", "interrupted"])
def test_exit_codes(fake_core: FakeCore, capsys: Capture, fig08: Path, tmp_path: Path,
                    monkeypatch: pytest.MonkeyPatch, argv: list[str], patch: object,
                    code: int, message: str) -> None:
    if patch is not None:
        monkeypatch.setattr(dcnsim.cli, "run", patch)
    args = [a.format(fig08=fig08, tmp=tmp_path) for a in argv]
    got, err = _run(capsys, *args)
    assert got == code
    assert err.strip() == message.format(tmp=tmp_path)
    if code in (1, 130):
        assert not (tmp_path / "o").exists(), "a run that failed left an empty folder"


def test_ctrl_c_of_the_real_command_exits_130(fig08: Path, tmp_path: Path) -> None:
    # A whole `dcnsim run` process, stopped by SIGINT while it simulates a long scenario.
    import signal

    env = {**os.environ, "CI": "true"}
    # SIGINT as a terminal's Ctrl-C gives it, even when this suite runs with SIGINT ignored
    # (a shell's background job), which the child would inherit.
    proc = subprocess.Popen([sys.executable, "-m", "dcnsim", "run", str(fig08), "--set",
                             'sim.duration="1000s"', "--out", str(tmp_path / "o")],
                            stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=sigint_default)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "o").is_dir():  # made just before simulating
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:  # not stopped by SIGINT: no 1000 s run left behind
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "dcnsim: error: interrupted"
