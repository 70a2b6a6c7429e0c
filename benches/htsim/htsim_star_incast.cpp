// htsim_star_incast: star incast on top of htsim (Broadcom/csg-htsim), for
// dcnsim's benches/peers.py.  Our own driver; it only links htsim's library
// (build: benches/htsim/build.sh).
//
//   htsim_star_incast -n SERVERS -rate_gbps R -time_s T -workload long|sru [-v]
//
// N servers, each with its own link to one switch; the switch has one link to
// the client.  Every link R Gb/s, 25 us.  The switch's port towards the client
// is a drop-tail Queue of 256 KiB (+1500 B: htsim counts the packet in service
// against the limit); every other queue is large enough never to drop.
// TCP: htsim's TcpSrc/TcpSink (NewReno-like), 1500-byte packets (1460 bytes of
// payload in our accounting), initial window 2, window cap 20 packets (via
// _maxcwnd), minimum RTO 200 ms (htsim hard-codes 250 ms; see MinRtoTcpSrc),
// TcpRtxTimerScanner every 1 ms.  No loggers.
//
// Workloads: "long": one never-ending flow per server from t = 0.
//            "sru":  barrier-synchronised rounds; each round every server sends
//                    one 256 000-byte SRU (176 packets) on its (reused)
//                    connection; when all SRUs are acked the next round starts
//                    at the same instant.
//
// stdout: exactly one line "bottleneck_pkts N" (packets that left the switch's
// queue towards the client).  htsim's own console messages (TcpSrc prints on
// timeouts and flow completion) are discarded, or sent to stderr with -v.
// A summary goes to stderr.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "route.h"
#include "tcp.h"
#include "tcppacket.h"

namespace {

const int PKT_BYTES = 1500;          // wire size of a data packet
const int PAYLOAD_BYTES = 1460;      // payload accounting (SRU size in packets)
const uint64_t SRU_BYTES = 256000;
const uint64_t SRU_PKTS = (SRU_BYTES + PAYLOAD_BYTES - 1) / PAYLOAD_BYTES;  // 176
const mem_b BOTTLENECK_BUF = 262144 + PKT_BYTES;
const mem_b BIG_BUF = 64LL * 1024 * 1024;  // never reached
const double LINK_DELAY_US = 25.0;
const int INIT_CWND_PKTS = 2;
const int MAX_CWND_PKTS = 20;
const simtime_picosec MIN_RTO = 200ULL * 1000 * 1000 * 1000;      // 200 ms
const simtime_picosec HTSIM_MIN_RTO = 250ULL * 1000 * 1000 * 1000;  // tcp.cpp's floor
const simtime_picosec SCAN_PERIOD = 1ULL * 1000 * 1000 * 1000;      // 1 ms

// A drop-tail FIFO that counts the packets it has forwarded.
class CountingQueue : public Queue {
public:
    CountingQueue(linkspeed_bps rate, mem_b maxsize, EventList& ev)
        : Queue(rate, maxsize, ev, NULL), departed(0) {}
    uint64_t departed;
protected:
    virtual void completeService() {
        ++departed;
        Queue::completeService();
    }
};

class Barrier;

// TcpSrc with a 200 ms RTO floor instead of htsim's 250 ms, and a hook for the
// SRU barrier.  TcpSrc::receivePacket recomputes _rto = srtt + 4*mdev on every
// ACK and raises it to 250 ms; when that floor was applied we lower it to
// max(srtt + 4*mdev, 200 ms) and re-arm a timer that this ACK set to now+250 ms.
class MinRtoTcpSrc : public TcpSrc {
public:
    MinRtoTcpSrc(EventList& ev) : TcpSrc(NULL, NULL, ev), barrier(NULL), target_ack(0), done(true) {}
    Barrier* barrier;
    uint64_t target_ack;   // _last_acked value at which the current SRU is acked
    bool done;

    // Give the connection one more SRU (reused connection, like ns-2's advanceby).
    void add_sru() {
        // TcpSrc sends while _highest_sent <= _flow_size + 1, with _highest_sent
        // = 1 + 1500 * packets sent (the SYN takes sequence number 1).
        uint64_t total = (target_ack == 0 ? 0 : (target_ack - 1) / PKT_BYTES) + SRU_PKTS;
        _flow_size = (total - 1) * PKT_BYTES;
        target_ack = 1 + total * PKT_BYTES;
        done = false;
        if (_established) send_packets();
    }

    virtual void receivePacket(Packet& pkt);
};

class Barrier : public EventSource {
public:
    Barrier(EventList& ev, std::vector<MinRtoTcpSrc*>& srcs)
        : EventSource(ev, "barrier"), _srcs(srcs), waiting(0), rounds(0) {}
    void one_done() {
        if (--waiting == 0) {
            ++rounds;
            eventlist().sourceIsPendingRel(*this, 0);  // next round, same instant
        }
    }
    void start_round() {
        waiting = _srcs.size();
        for (size_t i = 0; i < _srcs.size(); i++) _srcs[i]->add_sru();
    }
    virtual void doNextEvent() { start_round(); }
private:
    std::vector<MinRtoTcpSrc*>& _srcs;
public:
    size_t waiting;
    uint64_t rounds;
};

void MinRtoTcpSrc::receivePacket(Packet& pkt) {
    TcpSrc::receivePacket(pkt);  // frees pkt
    if (_rto == HTSIM_MIN_RTO) {
        simtime_picosec r = _rtt + 4 * _mdev;
        if (r < MIN_RTO) r = MIN_RTO;
        if (r < HTSIM_MIN_RTO) {
            simtime_picosec now = eventlist().now();
            if (_RFC2988_RTO_timeout == now + HTSIM_MIN_RTO) _RFC2988_RTO_timeout = now + r;
            _rto = r;
        }
    }
    if (!done && _last_acked >= target_ack) {
        done = true;
        if (barrier) barrier->one_done();
    }
}

void usage(const char* prog) {
    std::fprintf(stderr,
                 "usage: %s -n SERVERS -rate_gbps R -time_s T -workload long|sru [-v]\n", prog);
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    int n = 0;
    double rate_gbps = 0, time_s = 0;
    std::string workload;
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-v") { verbose = true; continue; }
        if (i + 1 >= argc) usage(argv[0]);
        const char* v = argv[++i];
        if (a == "-n") n = std::atoi(v);
        else if (a == "-rate_gbps") rate_gbps = std::atof(v);
        else if (a == "-time_s") time_s = std::atof(v);
        else if (a == "-workload") workload = v;
        else usage(argv[0]);
    }
    if (n <= 0 || rate_gbps <= 0 || time_s <= 0 || (workload != "long" && workload != "sru"))
        usage(argv[0]);
    const bool sru = workload == "sru";

    // htsim's TcpSrc writes to std::cout (timeouts, flow completion): keep
    // stdout for our one line.
    std::streambuf* coutbuf = std::cout.rdbuf();
    if (verbose) std::cout.rdbuf(std::cerr.rdbuf());
    else std::cout.setstate(std::ios::badbit);

    Packet::set_packet_size(PKT_BYTES);
    EventList& ev = EventList::getTheEventList();
    EventList::setEndtime((simtime_picosec)std::llround(time_s * 1e12));

    const linkspeed_bps rate = speedFromGbps(rate_gbps);
    const simtime_picosec delay = timeFromUs(LINK_DELAY_US);

    // Switch -> client: the bottleneck.  Client -> switch: the ACKs of all flows.
    CountingQueue* bottleneck = new CountingQueue(rate, BOTTLENECK_BUF, ev);
    Pipe* sw_cl = new Pipe(delay, ev);
    Queue* cl_q = new Queue(rate, BIG_BUF, ev, NULL);
    Pipe* cl_sw = new Pipe(delay, ev);

    TcpRtxTimerScanner* scanner = new TcpRtxTimerScanner(SCAN_PERIOD, ev);
    std::vector<MinRtoTcpSrc*> srcs;
    Barrier* barrier = new Barrier(ev, srcs);

    for (int i = 0; i < n; i++) {
        Queue* up_q = new Queue(rate, BIG_BUF, ev, NULL);    // server -> switch
        Pipe* up_p = new Pipe(delay, ev);
        Queue* down_q = new Queue(rate, BIG_BUF, ev, NULL);  // switch -> server (ACKs)
        Pipe* down_p = new Pipe(delay, ev);

        MinRtoTcpSrc* src = new MinRtoTcpSrc(ev);
        TcpSink* sink = new TcpSink();
        // TcpSrc opens with a SYN, and the SYN's ACK grows the window by one
        // packet (slow start) before any data is sent: start at one packet less
        // so that the first data window is INIT_CWND_PKTS.
        src->set_cwnd((INIT_CWND_PKTS - 1) * PKT_BYTES);
        src->_maxcwnd = MAX_CWND_PKTS * PKT_BYTES;
        if (sru) src->barrier = barrier;

        Route* out = new Route();
        out->push_back(up_q);
        out->push_back(up_p);
        out->push_back(bottleneck);
        out->push_back(sw_cl);
        out->push_back(sink);
        Route* back = new Route();
        back->push_back(cl_q);
        back->push_back(cl_sw);
        back->push_back(down_q);
        back->push_back(down_p);
        back->push_back(src);

        src->connect(*out, *back, *sink, 0);
        scanner->registerTcp(*src);
        srcs.push_back(src);
    }
    if (sru) barrier->start_round();  // first SRU: sent once the SYN is acked

    uint64_t events = 0;
    while (EventList::doNextEvent()) ++events;

    uint64_t drops = bottleneck->num_drops();
    uint64_t acked_pkts = 0;
    for (size_t i = 0; i < srcs.size(); i++)
        if (srcs[i]->_last_acked > 1) acked_pkts += (srcs[i]->_last_acked - 1) / PKT_BYTES;

    std::cout.rdbuf(coutbuf);
    std::cout.clear();
    std::fprintf(stderr,
                 "htsim_star_incast: n=%d rate=%g Gb/s time=%g s workload=%s events=%llu "
                 "drops=%llu rounds=%llu acked_data_pkts=%llu\n",
                 n, rate_gbps, time_s, workload.c_str(), (unsigned long long)events,
                 (unsigned long long)drops, (unsigned long long)barrier->rounds,
                 (unsigned long long)acked_pkts);
    std::printf("bottleneck_pkts %llu\n", (unsigned long long)bottleneck->departed);
    std::fflush(stdout);
    return 0;
}
