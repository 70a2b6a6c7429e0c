"""Bad inputs and interrupted work: special files, oversized files, unwritable output
folders, and two sweeps into one folder (docs/robustness.md, "Nothing lost")."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import dcnsim.api
import pytest
from dcnsim.runs import LOCK_FILE, RUNS_FILE, RunStore
from dcnsim.scenario import MAX_SCENARIO_BYTES, load_validated, make_plan
from dcnsim.sweep import run_sweep

from .conftest import FakeCore, run_cli

Capture = pytest.CaptureFixture[str]


_run = run_cli


def test_a_device_is_refused_at_once(fake_core: FakeCore, capsys: Capture) -> None:
    # /dev/zero never ends: it must not be read at all.
    code, err = _run(capsys, "validate", "/dev/zero")
    assert code == 2
    assert err.strip() == "dcnsim: error: /dev/zero: not a regular file"


def test_a_named_pipe_is_refused_without_blocking(fake_core: FakeCore, capsys: Capture,
                                                  tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)  # opening it for reading would block until a writer comes
    code, err = _run(capsys, "validate", str(fifo))
    assert code == 2 and "not a regular file" in err


def test_an_oversized_file_is_refused(fake_core: FakeCore, capsys: Capture,
                                      tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with big.open("wb") as fh:
        fh.truncate(MAX_SCENARIO_BYTES + 1)
    code, err = _run(capsys, "validate", str(big))
    assert code == 2 and "larger than 16 MiB" in err
    assert len(err.strip().splitlines()) == 1


def test_run_checks_the_output_folder_before_simulating(
        fake_core: FakeCore, capsys: Capture, fig08: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = dcnsim.api.run

    def counting_run(*args: object, **kw: object) -> object:
        calls.append("run")
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(dcnsim.cli, "run", counting_run)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code, err = _run(capsys, "run", str(fig08), "--out", str(blocker / "out"))
    assert code == 2 and "cannot create output directory" in err
    assert calls == [], "the scenario was simulated although its results could not be saved"


def test_a_second_sweep_into_the_same_folder_is_refused(fake_core: FakeCore, fig08: Path,
                                                        tmp_path: Path) -> None:
    plan = make_plan(load_validated(fig08), quick=True)
    holder = RunStore(tmp_path / RUNS_FILE, "x")
    holder.lock()
    try:
        assert (tmp_path / LOCK_FILE).read_text().strip() == str(os.getpid())
        with pytest.raises(dcnsim.UserError, match=rf"another dcnsim sweep \(pid {os.getpid()}\)"):
            run_sweep(plan, tmp_path, jobs=1)
        assert not (tmp_path / RUNS_FILE).exists(), "the refused sweep wrote nothing"
    finally:
        holder.close()
    # Once the first one is done the folder is free again.
    outcome = run_sweep(plan, tmp_path, jobs=1)
    assert outcome.ran == len(plan.points)


def test_a_sweep_of_a_million_points_is_refused_at_once(fake_core: FakeCore, capsys: Capture,
                                                        tmp_path: Path) -> None:
    import time

    axis = ", ".join(str(i) for i in range(1, 101))
    scen = tmp_path / "huge.toml"
    scen.write_text(
        "[sim]\nduration = \"1s\"\n[topology]\nkind = \"star\"\nservers = 2\n"
        "link_rate = \"1Gbps\"\n[[apps]]\nkind = \"incast\"\nsru = \"1KB\"\n[sweep]\n"
        f"\"topology.servers\" = [{axis}]\n\"sim.seed\" = [{axis}]\n\"apps.0.sru\" = [{axis}]\n")
    t0 = time.monotonic()
    code, err = _run(capsys, "validate", str(scen))
    assert time.monotonic() - t0 < 10
    assert code == 2
    assert 'field sweep."topology.servers": 1000000 points (100 x 100 x 100)' in err


def test_a_huge_bad_value_is_cut_in_the_error_line(fake_core: FakeCore, capsys: Capture,
                                                   tmp_path: Path) -> None:
    from dcnsim._messages import QUOTED_MAX, shorten

    value = "x" * 5_000_000
    line = shorten(f'/t.toml: line 2, field sim.duration: invalid duration "{value}": expected')
    assert len(line) < 200
    assert f'"{"x" * (QUOTED_MAX - 1)}…" (5000000 characters): expected' in line
    short = 'field a: unknown kind "bulk2": expected "bulk"'
    assert shorten(short) == short


def test_a_failed_check_exits_1_with_one_line(fake_core: FakeCore, capsys: Capture,
                                              fig08: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    real = fake_core.run_captured

    def failing(*args: object, **limits: object) -> object:
        tables, caps, info = real(*args, **limits)  # type: ignore[arg-type]
        return tables, caps, {**info, "check_failed": "port sw->client: arrived 3 != "
                                                      "dropped 0 + queued 0 + sent 2"}

    monkeypatch.setattr(fake_core, "run_captured", failing)
    code, err = _run(capsys, "run", str(fig08), "--check", "--out", str(tmp_path / "o"))
    assert code == 1
    assert err.strip() == (f"dcnsim: error: {fig08}: --check failed: port sw->client: "
                           "arrived 3 != dropped 0 + queued 0 + sent 2")
    assert fake_core.limits == {"check": True}


# Messages the scenario fuzzer found over 200 characters (besides the file's path), as the
# engine and the sweep's validation wrote them.
LONG_MESSAGES = [
    '/tmp/x/tcn-fig13.toml, field apps.load: invalid type: string "' + "x" * 79 + '…" (300 '
    'characters), expected f64 (after applying overrides) (in sweep point topology.queues='
    '{count = 32, scheduler = "sp_dw… apps.0.load=' + "x" * 31 + "…)",
    "/tmp/x/a.toml, field topology.switch_buffer: invalid size \"0x10ms\": expected a number "
    "followed by B, KB, KiB, MB, MiB, GB or GiB (KB = 1000 B, KiB = 1024 B), or \"unlimited\" "
    "(after applying overrides) (in quick sweep point topology.switch_buffer=0x10ms "
    "topology.servers=2)",
    "/tmp/x/qcn-baseline1.toml: line 164, field apps.kind: unknown variant `" + "x" * 79
    + "…` (20000 characters), expected one of `incast`, `bulk`, `cbr`, `flows`, `mix`, "
    "`ping`, `transactions`, `workload`",
    "/tmp/x/tcn-fig13.toml: line 35, field apps.service_workloads: app 0: unknown flow-size "
    "distribution 'websearché' (built-in: websearch, datamining, hadoop, cache, "
    "websearch-bytes, datamining-bytes, cache-bytes, hadoop-fbhdp-bytes, alistorage2019-bytes, "
    "googlerpc2008-bytes) and more words here",
    # the third fuzz campaign (docs/robustness.md): a [measure] line that lost its
    # newline, and a memory estimate with a long sweep point
    "/tmp/dcnsim-fuzz-u_g3wfze/devkota-fig25.toml: line 47, field measure.topology.switch_buffer:"
    " unknown field `topology.switch_buffer`, expected one of " + ", ".join(
        f"`{n}`" for n in ["silent_link", "silent_threshold", "bottleneck", "queue_interval",
                           "queue_ports", "rate_interval", "rate_flows", "cwnd_interval",
                           "cwnd_flows", "throughput_interval", "fairness_after", "fct",
                           "trace", "pcap", "sample_limit", "qcn_interval"]),
    "/tmp/dcnsim-fuzz-a43qlbjs/odctcp-fairness.toml: line 48, field measure.throughput_interval:"
    " the run needs about 41.0 GB (throughput samples 41.0 GB), 24.4 GB available "
    "(--max-memory, ulimit -v): lower measure.throughput_interval (in sweep point "
    "apps.1.tcp.cc=odctcp apps.0.count=16)",
    # the same campaign, a long unknown name (it is in the message twice)
    "/tmp/dcnsim-fuzz-jzufgp_9/odctcp-fig5-5.toml: line 48, field "
    "measure.queue_intervalt_interval: unknown field `queue_intervalt_interval`, expected one"
    " of " + ", ".join(f"`{n}`" for n in ["silent_link", "silent_threshold", "bottleneck",
                                          "queue_interval", "queue_ports", "rate_interval",
                                          "rate_flows", "cwnd_interval", "cwnd_flows",
                                          "throughput_interval", "fairness_after", "fct",
                                          "trace", "pcap", "sample_limit", "rp_interval"]),
    # Hypothesis (tests/test_fuzz_properties.py): a nested value printed whole
    "/tmp/p1.toml: line 63, field report.source_series: series 2: expected a table, got "
    "[False, [], {'0': 1.3407807929868787e+154, '0000\\x1f\\U0001342f\\U0001b2fc': False, "
    "'00\\x1f\\x1f\\x1f': [False, False, False, False]}, 1.3407807929868787e+154, "
    "1.3407807929868787e+154]",
]


@pytest.mark.parametrize("message", LONG_MESSAGES)
def test_long_messages_are_fitted_into_200_characters(message: str) -> None:
    from dcnsim._messages import LINE_MAX, shorten

    path = message.split(".toml")[0] + ".toml"
    assert len(message) - len(path) > LINE_MAX
    line = shorten(message)
    assert len(line) - len(path) <= LINE_MAX, line
    assert line.startswith(path)
    field = message.split("field ")[1].split(":")[0]
    assert f"field {field}:" in line  # the field and the reason stay
    assert "(after applying overrides)" not in line or "sweep point" not in line


def test_fitting_keeps_the_closest_names() -> None:
    from dcnsim._messages import shorten

    line = shorten(LONG_MESSAGES[3])
    assert "(built-in: websearch, " in line and "10 in all)" in line
    line = shorten(LONG_MESSAGES[2])
    assert "(first 3 of 8 names" in line or "(closest" in line


def test_fitting_shortens_unit_lists_and_long_numbers() -> None:
    from dcnsim._messages import LINE_MAX, shorten

    path = "/tmp/x/tcn-fig5.toml"
    size = (f'{path}, field topology.switch_buffer: invalid size "128KiB{"Ω" * 40}…": expected '
            "a number followed by B, KB, KiB, MB, MiB, GB or GiB (KB = 1000 B, KiB = 1024 B), "
            'or "unlimited" (in sweep point topology.switch_buffer=128KiBΩΩΩΩΩΩΩΩΩΩΩΩ…)')
    number = (f"{path}: line 31, field apps.load: app 0 (workload): -1{'0' * 300} is out of "
              "range (0, 1.5] (in quick sweep point apps.0.load=0.1)")
    for message in (size, number):
        line = shorten(message)
        assert len(line) - len(path) <= LINE_MAX, line
    assert 'expected a size such as "256KiB" or "32KB", or "unlimited"' in shorten(size)
    assert "-1e300 (about) is out of range (0, 1.5]" in shorten(number)


def test_line_breaking_characters_are_escaped() -> None:
    """Hypothesis found a key with U+0085 (NEL), which ``str.splitlines`` treats as a line
    break: every C0/C1 control and the Unicode line separators are written as escapes."""
    from dcnsim._messages import shorten

    line = shorten("/tmp/a.toml: line 3, field meta.\u0085: unknown field `\x85 \u2028 \u2029 "
                    "\x1c \r`, expected one of `id`, `title`, `source`")
    assert len(line.splitlines()) == 1, line
    assert "field meta.\\x85:" in line and "`\\x85 \\u2028 \\u2029 \\x1c \\x0d`" in line


# A congestion control's name of 100 KB, in the scenario file (line 21) or in a sweep axis
# (strings in the Python-owned tables are capped at 10 000 characters: 9 000 here). The
# engine quotes such a name whole.
HUGE = "9" * 100_000
AXIS = "9" * 9_000


def _fig08_with(tmp_path: Path, old: str, new: str) -> Path:
    from .conftest import SCENARIOS

    text = (SCENARIOS / "devkota-fig08.toml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "fig08-bad.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize("call", ["run", "validate", "run_sweep"])
def test_the_api_gives_the_short_one_line_error_for_a_huge_value(tmp_path: Path,
                                                                 call: str) -> None:
    """The API's `ScenarioError` carried the whole bad value (a 100 KB message for a
    100 KB string; only the command line cut it): it now has the CLI's one line, naming
    the file, line and field, and the whole text in `full_message`."""
    import dcnsim

    path = _fig08_with(tmp_path, 'cc = "newreno"', f'cc = "{HUGE}"')
    calls: dict[str, Callable[[], object]] = {
        "run": lambda: dcnsim.run(path), "validate": lambda: dcnsim.validate(path),
        "run_sweep": lambda: dcnsim.run_sweep(path, tmp_path / "out", quick=True)}
    with pytest.raises(dcnsim.ScenarioError) as info:
        calls[call]()
    message = str(info.value)
    assert len(message) < 300, message[:400]
    assert message.startswith(f"{path}: line 21, field tcp.cc: "), message
    assert "\n" not in message and "…" in message
    assert HUGE in info.value.full_message


def test_a_sweep_point_error_through_the_api_is_short(tmp_path: Path) -> None:
    import dcnsim

    path = _fig08_with(tmp_path, '"topology.servers" = [1, 2, 4, 8, 16, 32, 64]',
                       f'"topology.servers" = [1, 2]\n"tcp.cc" = ["newreno", "{AXIS}"]')
    for call in (lambda: dcnsim.validate(path),
                 lambda: dcnsim.run_sweep(path, tmp_path / "out", jobs=1)):
        with pytest.raises(dcnsim.ScenarioError) as info:
            call()
        message = str(info.value)
        assert len(message) < 300, message[:400]
        assert message.startswith(f"{path}") and "field tcp.cc: " in message, message
        assert AXIS in info.value.full_message


def test_a_short_message_is_left_as_it_is_and_shortening_is_stable() -> None:
    """The API's shortening and the command line's give one line: the CLI shortens an
    already shortened message to itself."""
    from dcnsim._messages import shorten

    for message in LONG_MESSAGES:
        once = shorten(message)
        assert shorten(once) == once
