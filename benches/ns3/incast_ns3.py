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

--tcp-defaults matched (default) sets ns-3's TCP details to match dcnsim's;
--tcp-defaults ns3 keeps ns-3's own defaults for everything the scenario does
not set.  Prints one line of JSON on stdout (--batch: one line per stdin
line, several simulations in one process).  See README.md in this folder.
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
#include <algorithm>
#include <string>
#include <unordered_map>

namespace dcnsim_bench {
using namespace ns3;

// TcpNewReno that also counts retransmission-timer expiries.  ns-3 3.44
// raises CA_EVENT_LOSS in exactly one place, TcpSocketBase::ReTxTimeout(),
// after the early returns for "nothing outstanding" (and for a SYN timeout),
// so every expiry with data outstanding is counted once, including a
// backed-off expiry while the connection is already in CA_LOSS.  Behaviour is
// otherwise TcpNewReno's; GetInstanceTypeId() and GetName() stay TcpNewReno.
class CountingNewReno : public TcpNewReno
{
  public:
    explicit CountingNewReno(uint64_t* counter = nullptr)
        : m_counter(counter)
    {
    }

    CountingNewReno(const CountingNewReno& other)
        : TcpNewReno(other),
          m_counter(other.m_counter)
    {
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        if (event == TcpSocketState::CA_EVENT_LOSS && m_counter)
        {
            ++*m_counter;
        }
        TcpNewReno::CwndEvent(tcb, event);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<CountingNewReno>(this);
    }

  private:
    uint64_t* m_counter;
};

// The value of attribute `name` of a live object, as ns-3 serialises it.
std::string AttrString(Ptr<Object> obj, const std::string& name)
{
    TypeId::AttributeInformation info;
    if (!obj->GetInstanceTypeId().LookupAttributeByName(name, &info))
    {
        return "<no such attribute>";
    }
    if (!(info.flags & TypeId::ATTR_GET) || !info.accessor->HasGetter())
    {
        return "<not readable>";
    }
    Ptr<AttributeValue> v = info.checker->Create();
    obj->GetAttribute(name, *v);
    return v->SerializeToString(info.checker);
}

// The TypeId name of the object held by pointer attribute `name`.
std::string PointeeType(Ptr<Object> obj, const std::string& name)
{
    PointerValue pv;
    obj->GetAttribute(name, pv);
    Ptr<Object> o = pv.Get<Object>();
    return o ? o->GetInstanceTypeId().GetName() : std::string("<null>");
}

// The current default (initial value) of attribute `attr` of type `tid`.
std::string DefaultString(const std::string& tid, const std::string& attr)
{
    TypeId::AttributeInformation info;
    if (!TypeId::LookupByName(tid).LookupAttributeByName(attr, &info))
    {
        return "<no such attribute>";
    }
    return info.initialValue->SerializeToString(info.checker);
}

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
        Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(s);
        NS_ABORT_MSG_IF(!tcp, "not a TcpSocketBase");
        NS_ABORT_MSG_IF(PointeeType(tcp, "CongestionOps") != "ns3::TcpNewReno",
                        "SocketType must be TcpNewReno");
        // Same algorithm, plus the timeout counter (see CountingNewReno).
        tcp->SetCongestionControlAlgorithm(CreateObject<CountingNewReno>(&m_timeouts));
        s->TraceConnectWithoutContext("CongState", MakeCallback(&Incast::CongState, this));
        s->TraceConnectWithoutContext("RWND", MakeCallback(&Incast::Rwnd, this));
        s->TraceConnectWithoutContext("BytesInFlight", MakeCallback(&Incast::InFlight, this));
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
    uint64_t Timeouts() const { return m_timeouts; }
    uint32_t MaxRwnd() const { return m_maxRwnd; }
    uint32_t MaxInFlight() const { return m_maxInFlight; }
    Ptr<Socket> Server(uint32_t i) const { return m_servers.at(i); }
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

    void Rwnd(uint32_t, uint32_t now) { m_maxRwnd = std::max(m_maxRwnd, now); }
    void InFlight(uint32_t, uint32_t now) { m_maxInFlight = std::max(m_maxInFlight, now); }

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
    uint64_t m_timeouts = 0;
    uint32_t m_maxRwnd = 0;
    uint32_t m_maxInFlight = 0;
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


def configure_tcp(ns, tcp_defaults, min_rto_ms, rwnd_bytes):
    """Set the TCP attribute defaults for the next sockets.

    Starts from ns-3's own defaults (Config::Reset, so several runs in one
    process do not leak settings into each other).  Then, in both modes:
    the settings of the dcnsim scenario itself, and two harness settings.
    In `matched` mode also the settings that make ns-3's TCP match dcnsim's.
    """
    ns.Config.Reset()
    # The dcnsim scenario's own TCP parameters.
    set_default(ns, "ns3::TcpL4Protocol::SocketType",
                ns.TypeIdValue(ns.TcpNewReno.GetTypeId()))
    set_default(ns, "ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT_SIZE))
    set_default(ns, "ns3::TcpSocket::InitialCwnd", ns.UintegerValue(2))
    set_default(ns, "ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MicroSeconds(
        round(min_rto_ms * 1000))))
    set_default(ns, "ns3::TcpSocket::RcvBufSize", ns.UintegerValue(rwnd_bytes))
    # Harness: the application hands a whole SRU to TCP at once (as dcnsim's
    # does), and a connection never gives up after repeated timeouts (ns-3's
    # default of 6 retries would abort it and stall the barrier for good).
    set_default(ns, "ns3::TcpSocket::SndBufSize", ns.UintegerValue(SOCKET_BUF))
    set_default(ns, "ns3::TcpSocket::DataRetries", ns.UintegerValue(1000))
    if tcp_defaults == "ns3":
        return
    # Plain RFC 6582 NewReno fast recovery instead of ns-3's default PRR.
    set_default(ns, "ns3::TcpL4Protocol::RecoveryType",
                ns.TypeIdValue(ns.TcpClassicRecovery.GetTypeId()))
    set_default(ns, "ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    set_default(ns, "ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    set_default(ns, "ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
    # dcnsim's sender (RFC 5681/6582/6298) has no Limited Transmit (RFC 3042,
    # on by default in ns-3) and uses a 1 us RTO clock granularity (ns-3: 1 ms).
    # `matched-lt` keeps ns-3's default Limited Transmit (dcnsim has it since the
    # loss-recovery work, on by default).
    set_default(ns, "ns3::TcpSocketBase::LimitedTransmit",
                ns.BooleanValue(tcp_defaults == "matched-lt"))
    set_default(ns, "ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MicroSeconds(1)))
    # Window scaling stays on (also ns-3's default) so a 4 MB receive buffer is usable.
    set_default(ns, "ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))


# Attributes read back from a live server socket after the run (so options
# negotiated away in the handshake, e.g. SACK or timestamps, show as false).
_SOCKET_ATTRS = (
    "SegmentSize", "InitialCwnd", "InitialSlowStartThreshold", "SndBufSize", "RcvBufSize",
    "DelAckCount", "DelAckTimeout", "TcpNoDelay", "DataRetries", "ConnTimeout", "ConnCount",
    "PersistTimeout", "MinRto", "ClockGranularity", "Sack", "Timestamp", "WindowScaling",
    "MaxWindowSize", "LimitedTransmit", "ReTxThreshold",
)
# Current defaults of attributes that a live socket does not let us read.
_DEFAULT_ATTRS = (
    ("ns3::TcpSocketBase", "UseEcn"),  # write-only attribute
    ("ns3::TcpSocketState", "EnablePacing"),
    ("ns3::RttEstimator", "InitialEstimation"),
    ("ns3::RttMeanDeviation", "Alpha"),
    ("ns3::RttMeanDeviation", "Beta"),
)


def _readable(value):
    """ns-3 prints a Time as e.g. "+2e+08ns"; show it as "200ms"."""
    if len(value) > 3 and value.endswith("ns") and value[0] in "+-":
        try:
            nanos = float(value[:-2])
        except ValueError:
            return value
        for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
            if nanos != 0 and abs(nanos) >= scale:
                return f"{nanos / scale:g}{unit}"
        return f"{nanos:g}ns"
    return value


def tcp_settings(ns, sock, server_node):
    """The TCP settings in effect, read back from ns-3 (strings as ns-3 prints them)."""
    glue = ns.cppyy.gbl.dcnsim_bench
    out = {
        "CongestionOps": str(glue.PointeeType(sock, "CongestionOps")),
        "RecoveryOps": str(glue.PointeeType(sock, "RecoveryOps")),
    }
    for name in _SOCKET_ATTRS:
        out[name] = _readable(str(glue.AttrString(sock, name)))
    tcp_l4 = server_node.GetObject[ns.TcpL4Protocol]()
    out["RttEstimatorType"] = str(glue.AttrString(tcp_l4, "RttEstimatorType"))
    for tid, attr in _DEFAULT_ATTRS:
        out[f"{tid.removeprefix('ns3::')}::{attr}"] = _readable(
            str(glue.DefaultString(tid, attr)))
    return out


def bottleneck_limit_bytes(buffer_bytes):
    """Byte limit for the device queue, which stores 1502-byte PPP frames.

    dcnsim counts 1500-byte IP packets against `buffer_bytes`; scaling the
    limit by 1502/1500 lets exactly floor(buffer_bytes / 1500) full-size
    data packets fit, the same number as in dcnsim.
    """
    return buffer_bytes * (IP_PACKET + PPP_HEADER) // IP_PACKET


def build_and_run(ns, servers, buffer_bytes, duration, tcp_defaults="matched",
                  min_rto_ms=200.0, rwnd_bytes=SOCKET_BUF, link_step_ns=0):
    configure_tcp(ns, tcp_defaults, min_rto_ms, rwnd_bytes)
    # Global state that Simulator::Destroy leaves behind: the record of
    # assigned addresses (a second run in the same process would collide).
    ns.Ipv4AddressGenerator.Reset()

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
        if link_step_ns:
            # Server i's link: 25 us + i * step (see --link-step-ns).
            p2p.SetChannelAttribute(
                "Delay", ns.TimeValue(ns.NanoSeconds(25_000 + i * link_step_ns)))
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

    settings = tcp_settings(ns, app.Server(0), hosts.Get(0))
    result = {
        "bottleneck_pkts": int(app.BottleneckPkts()),
        "bottleneck_drops": int(app.BottleneckDrops()),
        "rx_bytes": int(app.RxBytes()),
        "rounds": int(app.Rounds()),
        "loss_state_entries": int(app.LossEvents()),
        "timeouts": int(app.Timeouts()),
        "max_rwnd_bytes": int(app.MaxRwnd()),
        "max_bytes_in_flight": int(app.MaxInFlight()),
        "tcp_settings": settings,
        "connect_failures": int(app.ConnectFailures()),
        "wall": wall,
    }
    ns.Simulator.Destroy()
    del app
    return result



def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, default=8, help="number of servers (default 8)")
    ap.add_argument("--buffer-bytes", type=int, default=262144,
                    help="switch egress buffer toward the client, bytes (default 262144)")
    ap.add_argument("--duration", type=float, default=2.0,
                    help="simulated seconds (default 2)")
    ap.add_argument("--min-rto-ms", type=float, default=200.0,
                    help="TCP minimum RTO in ms (default 200)")
    ap.add_argument("--rwnd-bytes", "--rcv-buf", dest="rwnd_bytes", type=int,
                    default=SOCKET_BUF,
                    help="TCP receive buffer = advertised window, bytes (dcnsim's tcp.rwnd; "
                         "default 4 MiB; 29200 = ns-2's default 20-packet window)")
    ap.add_argument("--tcp-defaults", choices=("matched", "matched-lt", "ns3"), default="matched",
                    help="matched: TCP details set to match dcnsim (default); ns3: ns-3's "
                         "own defaults for everything the scenario does not set")
    ap.add_argument("--link-step-ns", type=int, default=0,
                    help="server i's link delay is 25 us + i * STEP ns (default 0: all "
                         "equal, so packets of different servers reach the switch at the same "
                         "instants and the event order breaks the ties)")
    ap.add_argument("--batch", action="store_true",
                    help="read one JSON list of these options per stdin line and print "
                         "one result line per input line, all in this process")
    args = ap.parse_args(argv)
    if args.servers < 1 or args.servers > 60000:
        ap.error("--servers must be in 1..60000")
    if args.buffer_bytes < IP_PACKET:
        ap.error("--buffer-bytes must hold at least one 1500-byte packet")
    if args.duration <= 0:
        ap.error("--duration must be positive")
    if args.min_rto_ms <= 0:
        ap.error("--min-rto-ms must be positive")
    if args.rwnd_bytes < SEGMENT_SIZE:
        ap.error("--rwnd-bytes must hold at least one 1460-byte segment")
    return args


def run_cell(ns, args):
    """Run one simulation; return the JSON-ready result dict."""
    r = build_and_run(ns, args.servers, args.buffer_bytes, args.duration,
                      args.tcp_defaults, args.min_rto_ms, args.rwnd_bytes,
                      args.link_step_ns)
    wall = r["wall"]
    out = {
        "simulator": "ns-3",
        "ns3_version": ns3_version(),
        "servers": args.servers,
        "buffer_bytes": args.buffer_bytes,
        "sim_seconds": args.duration,
        "min_rto_ms": args.min_rto_ms,
        "rwnd_bytes": args.rwnd_bytes,
        "tcp_defaults": args.tcp_defaults,
        "link_step_ns": args.link_step_ns,
        "wall_seconds": round(wall, 6),
        "bottleneck_pkts": r["bottleneck_pkts"],
        "goodput_mbps": round(r["rx_bytes"] * 8 / args.duration / 1e6, 3),
        "rounds": r["rounds"],
        "pkts_per_wall_s": round(r["bottleneck_pkts"] / wall, 1) if wall > 0 else None,
        "timeouts": r["timeouts"],
        # Diagnostics beyond the agreed keys.
        "bottleneck_drops": r["bottleneck_drops"],
        "loss_state_entries": r["loss_state_entries"],
        "max_rwnd_bytes": r["max_rwnd_bytes"],
        "max_bytes_in_flight": r["max_bytes_in_flight"],
        "tcp_settings": r["tcp_settings"],
    }
    if r["connect_failures"]:
        out["connect_failures"] = r["connect_failures"]
    return out


def run_batch(ns):
    """--batch: each stdin line is a JSON list of options; answer one line each."""
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            cell = json.loads(line)
            if not isinstance(cell, list) or "--batch" in cell:
                raise ValueError("expected a JSON list of options without --batch")
            out = run_cell(ns, parse_args([str(x) for x in cell]))
        except (Exception, SystemExit) as exc:  # argparse errors raise SystemExit
            out = {"error": f"{type(exc).__name__}: {exc}", "cell": line.strip()}
        print(json.dumps(out), flush=True)
    return 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    ns = load_ns3()
    if args.batch:
        return run_batch(ns)
    print(json.dumps(run_cell(ns, args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
