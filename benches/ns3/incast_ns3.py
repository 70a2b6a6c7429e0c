#!/usr/bin/env python3
"""ns-3 version of dcnsim's `devkota-fig08` TCP incast, for speed comparison.

Topology: one client and N servers, each on its own 1 Gb/s, 25 us
point-to-point link to a switch node that forwards IPv4 (global routing).
Barrier-synchronised incast: every round each server sends one SRU of
256000 bytes over its own persistent TCP NewReno connection; the next round
starts only when the client has received all N SRUs of the round.

The topology and TCP configuration are set up from Python through the
official `ns3` wheel (cppyy bindings).  The per-event logic (socket
callbacks, barrier, counters) is a small C++ class compiled at start-up with
cppyy.cppdef, so that no Python code runs inside Simulator::Run and the
measured wall time is ns-3's own.

Prints one line of JSON on stdout.  See README.md in this folder.
"""

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time

SRU_BYTES = 256000
LINK_RATE = "1Gbps"
LINK_DELAY = "25us"
SEGMENT_SIZE = 1460  # 1460 payload + 20 IP + 20 TCP = 1500-byte IP packet
IP_PACKET = 1500
PPP_HEADER = 2  # ns-3 PointToPointNetDevice adds a 2-byte PPP header
SOCKET_BUF = 4 * 1024 * 1024
CLIENT_PORT = 5000
# Device queues other than the bottleneck: large enough never to drop.
UNLIMITED_QUEUE = "100000p"

# Cling (inside cppyy) prints these harmless notices when the ns-3 headers
# are parsed; they concern static objects of the headers, not the libraries.
_BENIGN_STDERR = ("[runStaticInitializersOnce]",)

_GLUE_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/traffic-control-module.h"
#include <unordered_map>

namespace dcnsim_bench {
using namespace ns3;

// Barrier-synchronised incast driver plus the counters the benchmark reports.
class Incast
{
  public:
    Incast(uint32_t nServers, uint32_t sruBytes)
        : m_n(nServers), m_sru(sruBytes)
    {
    }

    // Client: one listening socket; every accepted connection reports data.
    void SetupClient(Ptr<Node> node, uint16_t port)
    {
        m_listen = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        m_listen->Listen();
        m_listen->SetAcceptCallback(
            MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
            MakeCallback(&Incast::Accepted, this));
    }

    // Server: one persistent connection to the client, opened at t = 0.
    void AddServer(Ptr<Node> node, Ipv4Address client, uint16_t port)
    {
        Ptr<Socket> s = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        s->TraceConnectWithoutContext("CongState", MakeCallback(&Incast::CongState, this));
        s->SetConnectCallback(MakeCallback(&Incast::Connected, this),
                              MakeCallback(&Incast::ConnectFailed, this));
        s->Bind();
        s->Connect(InetSocketAddress(client, port));
        m_servers.push_back(s);
    }

    // Count packets leaving the switch towards the client, and the drops.
    // Flow control is disabled on the devices, so every packet is offered to
    // the byte-limited DropTail device queue, which decides alone; the
    // traffic-control layer's TcDrop (stopped device queue) is watched too
    // and stays at 0 in this set-up.
    bool WatchBottleneck(Ptr<Node> sw, Ptr<NetDevice> dev, Ptr<QueueBase> queue)
    {
        bool ok = dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&Incast::TxEnd, this));
        ok &= queue->TraceConnectWithoutContext("Drop", MakeCallback(&Incast::Drop, this));
        ok &= sw->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop", MakeCallback(&Incast::Drop, this));
        return ok;
    }

    uint64_t BottleneckPkts() const { return m_txPkts; }
    uint64_t BottleneckDrops() const { return m_drops; }
    uint64_t RxBytes() const { return m_rxBytes; }
    uint64_t Rounds() const { return m_rounds; }
    uint64_t LossEvents() const { return m_rtoEvents; }
    uint32_t ConnectFailures() const { return m_connFail; }

  private:
    void Accepted(Ptr<Socket> s, const Address&)
    {
        m_rx[PeekPointer(s)] = 0;
        s->SetRecvCallback(MakeCallback(&Incast::Received, this));
    }

    void Connected(Ptr<Socket>)
    {
        if (++m_connected == m_n)
        {
            StartRound();
        }
    }

    void ConnectFailed(Ptr<Socket>)
    {
        ++m_connFail;
    }

    void StartRound()
    {
        m_doneThisRound = 0;
        for (auto& s : m_servers)
        {
            int sent = s->Send(Create<Packet>(m_sru));
            NS_ABORT_MSG_IF(sent != static_cast<int>(m_sru), "send buffer too small for one SRU");
        }
    }

    void Received(Ptr<Socket> s)
    {
        uint64_t& got = m_rx[PeekPointer(s)];
        const uint64_t target = (m_rounds + 1) * static_cast<uint64_t>(m_sru);
        Ptr<Packet> p;
        while ((p = s->Recv()) && p->GetSize() > 0)
        {
            const uint64_t before = got;
            got += p->GetSize();
            m_rxBytes += p->GetSize();
            if (before < target && got >= target)
            {
                if (++m_doneThisRound == m_n)
                {
                    ++m_rounds;
                    // The next request is instantaneous: servers send at once.
                    StartRound();
                    return;
                }
            }
        }
    }

    void TxEnd(Ptr<const Packet>) { ++m_txPkts; }
    void Drop(Ptr<const Packet>) { ++m_drops; }

    void CongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
    {
        if (now == TcpSocketState::CA_LOSS)
        {
            ++m_rtoEvents;
        }
    }

    uint32_t m_n;
    uint32_t m_sru;
    Ptr<Socket> m_listen;
    std::vector<Ptr<Socket>> m_servers;
    std::unordered_map<Socket*, uint64_t> m_rx;
    uint32_t m_connected = 0;
    uint32_t m_connFail = 0;
    uint32_t m_doneThisRound = 0;
    uint64_t m_rounds = 0;
    uint64_t m_rxBytes = 0;
    uint64_t m_txPkts = 0;
    uint64_t m_drops = 0;
    uint64_t m_rtoEvents = 0;
};

} // namespace dcnsim_bench
"""


class _QuietStderr:
    """Capture fd 2 while cppyy/cling parses headers; replay non-benign lines."""

    def __enter__(self):
        sys.stderr.flush()
        self._tmp = tempfile.TemporaryFile(mode="w+b")
        self._saved = os.dup(2)
        os.dup2(self._tmp.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._tmp.seek(0)
        text = self._tmp.read().decode("utf-8", "replace")
        self._tmp.close()
        for line in text.splitlines():
            if line.strip() and not line.startswith(_BENIGN_STDERR):
                print(line, file=sys.stderr)
        return False


def load_ns3():
    """Import the ns-3 bindings; exit 3 with a one-line message if impossible."""
    if importlib.util.find_spec("ns3") is None:
        print("incast_ns3: the 'ns3' Python package is not installed (pip install ns3)",
              file=sys.stderr)
        sys.exit(3)
    try:
        with _QuietStderr():
            from ns import ns  # noqa: WPS433 (import inside function on purpose)
            ns.cppyy.cppdef(_GLUE_CPP)
    except (Exception, SystemExit) as exc:  # the wheel's stub calls exit(-1)
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"incast_ns3: cannot load the ns-3 Python bindings: {msg}", file=sys.stderr)
        sys.exit(3)
    return ns


def ns3_version():
    try:
        from importlib.metadata import version
        return version("ns3")
    except Exception:
        return "unknown"


def set_default(ns, name, value):
    if not ns.Config.SetDefaultFailSafe(name, value):
        raise RuntimeError(f"ns-3 has no attribute {name}")


def configure_tcp(ns, rcv_buf=SOCKET_BUF):
    set_default(ns, "ns3::TcpL4Protocol::SocketType",
                ns.TypeIdValue(ns.TcpNewReno.GetTypeId()))
    # Plain RFC 6582 NewReno fast recovery instead of ns-3's default PRR.
    set_default(ns, "ns3::TcpL4Protocol::RecoveryType",
                ns.TypeIdValue(ns.TcpClassicRecovery.GetTypeId()))
    set_default(ns, "ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT_SIZE))
    set_default(ns, "ns3::TcpSocket::InitialCwnd", ns.UintegerValue(2))
    set_default(ns, "ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    set_default(ns, "ns3::TcpSocket::SndBufSize", ns.UintegerValue(SOCKET_BUF))
    set_default(ns, "ns3::TcpSocket::RcvBufSize", ns.UintegerValue(rcv_buf))
    # Never give up on a connection because of repeated timeouts.
    set_default(ns, "ns3::TcpSocket::DataRetries", ns.UintegerValue(1000))
    set_default(ns, "ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    set_default(ns, "ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    set_default(ns, "ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
    # dcnsim's sender (RFC 5681/6582/6298) has no Limited Transmit (RFC 3042,
    # on by default in ns-3) and uses a 1 us RTO clock granularity (ns-3: 1 ms).
    set_default(ns, "ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    set_default(ns, "ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MicroSeconds(1)))
    # Window scaling stays on (default) so the 4 MB receive buffer is usable.
    set_default(ns, "ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))


def bottleneck_limit_bytes(buffer_bytes):
    """Byte limit for the device queue, which stores 1502-byte PPP frames.

    dcnsim counts 1500-byte IP packets against `buffer_bytes`; scaling the
    limit by 1502/1500 lets exactly floor(buffer_bytes / 1500) full-size
    data packets fit, the same number as in dcnsim.
    """
    return buffer_bytes * (IP_PACKET + PPP_HEADER) // IP_PACKET


def build_and_run(ns, servers, buffer_bytes, duration, rcv_buf=SOCKET_BUF):
    configure_tcp(ns, rcv_buf)

    switch = ns.NodeContainer()
    switch.Create(1)
    client = ns.NodeContainer()
    client.Create(1)
    hosts = ns.NodeContainer()
    hosts.Create(servers)

    stack = ns.InternetStackHelper()
    stack.Install(switch)
    stack.Install(client)
    stack.Install(hosts)

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(LINK_RATE)))
    p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.Time(LINK_DELAY)))
    # Without flow control a packet goes straight from IP to the device's
    # DropTail queue, which then drops by its own byte count.  With flow
    # control, ns-3 "stops" a queue once it cannot take another MTU-size
    # frame and drops even small packets that would still fit.
    p2p.DisableFlowControl()

    sw = switch.Get(0)
    addr = ns.Ipv4AddressHelper()
    tch = ns.TrafficControlHelper()

    # Link 0: switch <-> client.  Device 0 is the switch side.
    client_link = p2p.Install(sw, client.Get(0))
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    client_if = addr.Assign(client_link)
    all_links = [client_link]
    for i in range(servers):
        link = p2p.Install(sw, hosts.Get(i))
        addr.SetBase(ns.Ipv4Address(f"10.{1 + i // 250}.{i % 250}.0"),
                     ns.Ipv4Mask("255.255.255.0"))
        addr.Assign(link)
        all_links.append(link)

    # No queue discs anywhere: the device queues are the only queues.  (With
    # flow control disabled Ipv4AddressHelper installs no default queue disc;
    # remove one should a later ns-3 do so anyway.)
    for link in all_links:
        for j in range(2):
            nd = link.Get(j)
            tcl = nd.GetNode().GetObject[ns.TrafficControlLayer]()
            if bool(tcl.GetRootQueueDiscOnDevice(nd)):
                tch.Uninstall(nd)
            dev = nd.GetObject[ns.PointToPointNetDevice]()
            dev.GetQueue().SetAttribute(
                "MaxSize", ns.QueueSizeValue(ns.QueueSize(UNLIMITED_QUEUE)))

    # The bottleneck: switch egress toward the client, DropTail in bytes.
    bott_dev = client_link.Get(0).GetObject[ns.PointToPointNetDevice]()
    bott_queue = bott_dev.GetQueue()
    bott_queue.SetAttribute(
        "MaxSize",
        ns.QueueSizeValue(ns.QueueSize(f"{bottleneck_limit_bytes(buffer_bytes)}B")))

    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    app = ns.cppyy.gbl.dcnsim_bench.Incast(servers, SRU_BYTES)
    app.SetupClient(client.Get(0), CLIENT_PORT)
    client_addr = client_if.GetAddress(1)
    for i in range(servers):
        app.AddServer(hosts.Get(i), client_addr, CLIENT_PORT)
    if not app.WatchBottleneck(sw, bott_dev, bott_queue):
        raise RuntimeError("could not connect the bottleneck trace sources")

    ns.Simulator.Stop(ns.Seconds(duration))
    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0

    result = {
        "bottleneck_pkts": int(app.BottleneckPkts()),
        "bottleneck_drops": int(app.BottleneckDrops()),
        "rx_bytes": int(app.RxBytes()),
        "rounds": int(app.Rounds()),
        "loss_state_entries": int(app.LossEvents()),
        "connect_failures": int(app.ConnectFailures()),
        "wall": wall,
    }
    ns.Simulator.Destroy()
    return result


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, default=8, help="number of servers (default 8)")
    ap.add_argument("--buffer-bytes", type=int, default=262144,
                    help="switch egress buffer toward the client, bytes (default 262144)")
    ap.add_argument("--duration", type=float, default=2.0,
                    help="simulated seconds (default 2)")
    ap.add_argument("--rcv-buf", type=int, default=SOCKET_BUF,
                    help="TCP receive buffer = advertised window, bytes (dcnsim's tcp.rwnd; "
                         "29200 = ns-2's default 20-packet window)")
    args = ap.parse_args(argv)
    if args.servers < 1 or args.servers > 60000:
        ap.error("--servers must be in 1..60000")
    if args.buffer_bytes < IP_PACKET:
        ap.error("--buffer-bytes must hold at least one 1500-byte packet")
    if args.duration <= 0:
        ap.error("--duration must be positive")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    ns = load_ns3()
    r = build_and_run(ns, args.servers, args.buffer_bytes, args.duration, args.rcv_buf)
    wall = r["wall"]
    out = {
        "simulator": "ns-3",
        "ns3_version": ns3_version(),
        "servers": args.servers,
        "buffer_bytes": args.buffer_bytes,
        "sim_seconds": args.duration,
        "wall_seconds": round(wall, 6),
        "bottleneck_pkts": r["bottleneck_pkts"],
        "goodput_mbps": round(r["rx_bytes"] * 8 / args.duration / 1e6, 3),
        "rounds": r["rounds"],
        "pkts_per_wall_s": round(r["bottleneck_pkts"] / wall, 1) if wall > 0 else None,
        # Diagnostics beyond the agreed keys.
        "bottleneck_drops": r["bottleneck_drops"],
        "loss_state_entries": r["loss_state_entries"],
    }
    if r["connect_failures"]:
        out["connect_failures"] = r["connect_failures"]
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
