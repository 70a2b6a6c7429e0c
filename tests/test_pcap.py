"""Packet captures (`[measure] pcap`) read back with tshark: no malformed frames, and tshark's
own TCP analysis agrees with dcnsim's counters.

Which tshark counts equal which dcnsim counters (docs/design.md, "Packet capture"):
- frames of a flow on its sender's NIC port = ``flows.segs_sent`` (every transmission);
- on the sender's side (NIC port and the port towards it, merged), the data frames that
  tshark labels retransmission, fast retransmission, spurious retransmission *or out of
  order* = ``flows.retransmits``: tshark flags every segment below the highest sequence
  sent, then splits them by a timing guess (one sent within an initial RTT of the highest
  segment is called "out of order", as it cannot tell a retransmission from reordering at
  one capture point); dcnsim counts every segment below ``snd_max``;
- ``tcp.analysis.duplicate_ack`` on the receiver's ACKs = ``flows.dup_acks_sent``.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

import pytest

from .test_integration import dcnsim_cli

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None,
                                reason="tshark is not installed (scripts/test-all.sh installs it)")

SERVERS = 3

SCENARIO = """
[sim]
duration = "0.2s"
seed = 1

[topology]
kind = "star"
servers = {servers}
link_rate = "1Gbps"
link_delay = "25us"
switch_buffer = "32KiB"
{aqm}

[tcp]
mss = 1460
min_rto = "10ms"
handshake = true
{tcp}

[[apps]]
kind = "incast"
client = "client"
sru = "64KB"

[measure]
pcap = {ports}
"""


def tshark_fields(path: Path, display_filter: str, *fields: str) -> list[list[str]]:
    cmd = ["tshark", "-n", "-o", "ip.check_checksum:TRUE", "-r", str(path), "-Y",
           display_filter, "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300)
    return [line.split("\t") for line in proc.stdout.splitlines()]


def count(path: Path, display_filter: str) -> int:
    return len(tshark_fields(path, display_filter, "frame.number"))


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def merged(out: Path, a: Path, b: Path) -> Path:
    """Both directions of one link in one file, in time order."""
    target = out / f"{a.stem}+{b.stem}.pcap"
    subprocess.run(["mergecap", "-F", "nsecpcap", "-w", str(target), str(a), str(b)],
                   check=True, timeout=300)
    return target


@pytest.mark.parametrize("variant", ["newreno", "dctcp-sack-ts"])
def test_incast_capture_matches_dcnsim_counters(tmp_path: Path, variant: str) -> None:
    ports = ["sw->client", "client->sw"]
    for k in range(1, SERVERS + 1):
        ports += [f"server{k}->sw", f"sw->server{k}"]
    tcp, aqm = "", ""
    if variant != "newreno":
        tcp = 'cc = "dctcp"\nsack = true\ntimestamps = true\ndsack = true'
        aqm = 'aqm = { kind = "step", k = "20KiB" }'
    scenario = tmp_path / "incast.toml"
    port_list = "[" + ", ".join(f'"{p}"' for p in ports) + "]"
    scenario.write_text(SCENARIO.format(servers=SERVERS, tcp=tcp, aqm=aqm, ports=port_list))
    out = tmp_path / "run"
    proc = dcnsim_cli("run", str(scenario), "--out", str(out))
    assert proc.returncode == 0, proc.stderr

    pcap = out / "pcap"
    table = {r["port"]: r for r in read_csv(out / "pcap.csv")}
    for port in ports:
        f = pcap / (port.replace("->", "-") + ".pcap")
        assert f.read_bytes()[:4] == bytes.fromhex("4d3cb2a1"), "nanosecond pcap, little-endian"
        assert count(f, "_ws.malformed") == 0, port
        assert count(f, "") == int(table[port]["frames"]), port
        assert table[port]["not_captured"] == "0"
        assert f.stat().st_size == int(table[port]["bytes"])

    # The bottleneck: every frame the port sent, IP checksums valid, IP lengths sum to its
    # byte counter (data and SYNs only on this port: no SACK bytes the model leaves out).
    bottleneck = next(r for r in read_csv(out / "ports.csv") if r["port"] == "sw->client")
    rows = tshark_fields(pcap / "sw-client.pcap", "", "ip.len", "ip.checksum.status")
    assert len(rows) == int(bottleneck["tx_pkts"])
    assert sum(int(r[0]) for r in rows) == int(bottleneck["tx_bytes"])
    good = tshark_fields(pcap / "sw-client.pcap", "ip.checksum.status == 1", "frame.number")
    assert len(good) == len(rows)

    flows = read_csv(out / "flows.csv")
    assert len(flows) == SERVERS
    total_retx = total_dup = 0
    for fl in flows:
        sport = 1024 + int(fl["flow"])
        server = fl["src"]
        nic = pcap / f"{server}-sw.pcap"
        assert count(nic, f"tcp.srcport == {sport}") == int(fl["segs_sent"]), server
        both = merged(tmp_path, nic, pcap / f"sw-{server}.pcap")
        retx = count(both, f"tcp.srcport == {sport} && (tcp.analysis.retransmission || "
                           "tcp.analysis.fast_retransmission || "
                           "tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order)")
        assert retx == int(fl["retransmits"]), server
        # Fast retransmissions are also labelled retransmissions.
        assert count(both, "tcp.analysis.fast_retransmission && "
                           "!tcp.analysis.retransmission") == 0
        dup = count(pcap / "client-sw.pcap",
                    f"tcp.dstport == {sport} && tcp.analysis.duplicate_ack")
        assert dup == int(fl["dup_acks_sent"]), server
        # The same ACKs seen at the sender (no ACK is lost on the way back).
        assert count(both, f"tcp.dstport == {sport} && tcp.analysis.duplicate_ack") == dup
        total_retx += retx
        total_dup += dup
    # The scenario exercises what it checks.
    assert total_retx > 0 and total_dup > 0
    if variant != "newreno":
        client = pcap / "client-sw.pcap"
        assert count(client, "tcp.options.sack_le") > 0
        assert count(client, "tcp.options.timestamp.tsval") == count(client, "tcp")
        assert count(pcap / "sw-client.pcap", "ip.dsfield.ecn == 3") > 0
        assert count(client, "tcp.flags.ece == 1") > 0


def test_pfc_frames_decode(tmp_path: Path) -> None:
    from .conftest import SCENARIOS

    out = tmp_path / "pfc"
    proc = dcnsim_cli("run", str(SCENARIOS / "pfc-priority-demo.toml"),
                      "--set", 'sim.duration="0.3s"', "--set", 'measure.pcap=["A->n1"]',
                      "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    f = out / "pcap" / "A-n1.pcap"
    assert count(f, "_ws.malformed") == 0
    sent = {(r["port"], r["priority"]): int(r["pfc_sent"]) for r in read_csv(out / "pfc_ports.csv")}
    for prio in range(8):
        n = count(f, f"macc.opcode == 0x0101 && macc.cbfc.enbv.c{prio} == 1")
        assert n == sent.get(("A->n1", str(prio)), 0), prio
    assert count(f, "macc") == sum(v for (p, _), v in sent.items() if p == "A->n1") > 0
