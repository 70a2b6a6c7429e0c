//! Packet capture per port (`[measure] pcap = ["A->B", ...]`): every frame a port starts
//! to transmit, as a libpcap file that Wireshark and tshark read.
//!
//! **File format**: libpcap with nanosecond time stamps (magic `0xa1b23c4d`, version 2.4,
//! link type 1 = Ethernet; the "pcap-savefile" format of libpcap and
//! draft-ietf-opsawg-pcap). The time stamp of a record is the simulated instant the port
//! *starts* serialising the frame (its first bit leaves), truncated from picoseconds to
//! nanoseconds. Payload bytes are not written: a record holds the headers only (its
//! captured length) and its original length is the frame's length on the wire.
//!
//! **Header mapping** (what the model carries, and what is written where it carries
//! nothing):
//! - Ethernet II: source MAC = `02:00:` + the transmitting node's id (32 bits, big-endian,
//!   locally administered), destination = the peer node's; frames are routed hop by hop.
//! - IPv4 (RFC 791): `10.a.b.c` = node id (low 24 bits) of the packet's source and
//!   destination host; DSCP = CS(class mod 8), ECN field = the packet's ECT(0)/CE state
//!   (RFC 3168 §5); identification 0 with DF set (RFC 6864 atomic datagrams), TTL 64, a
//!   valid header checksum. Total length = the headers written + the payload bytes, which
//!   equals the simulated size for the model's default 40-byte TCP/IP header (52 with
//!   timestamps) and 28-byte UDP/IP header.
//! - TCP (RFC 793): sender port `1024 + flow mod 64512`, receiver port 5001. Sequence
//!   numbers: the connection's initial sequence number is 0 on both sides, so the sender's
//!   SYN has seq 0 and a data segment seq `1 + model seq` (mod 2³²); ACKs carry seq 1 and
//!   ack `1 + model ack`. Data segments carry the ACK flag with ack 1 (one-way data). Flags
//!   SYN, ACK, ECE and CWR as the model sets them (RFC 3168 §6.1); ECN negotiation on
//!   SYN/SYN-ACK is not modelled and not written. Window: the receive window is not carried
//!   by packets, so 65535 (no window scaling) is written on every segment. Options: the
//!   timestamps option (RFC 7323) when the model counts its 12 bytes (header bytes counted
//!   = size − payload ≥ 52), TSval = the segment's send time in microseconds, TSecr on
//!   ACKs = the echoed TS.Recent in microseconds (0 on data segments, whose echo the model
//!   does not carry); SACK blocks (RFC 2018, D-SACK first as RFC 2883) on ACKs that carry
//!   them, edges mapped like sequence numbers. The model does not count SACK option bytes
//!   in a packet's size; they are written (and counted in the IP length) all the same.
//!   The checksum is valid for an all-zero payload.
//! - UDP (RFC 768): ports as TCP (a ping reply swaps them), checksum valid for a zero
//!   payload.
//! - IEEE 802.3x PAUSE (IEEE 802.3 Annex 31B): to 01-80-C2-00-00-01, EtherType 0x8808,
//!   opcode 0x0001, the pause quanta. IEEE 802.1Qbb PFC: opcode 0x0101, the priority-enable
//!   vector with the frame's one priority, its quanta in that priority's slot.
//! - QCN congestion notification messages (IEEE 802.1Qau, 802.1Q-2011 clause 33.4): to the
//!   sampled frame's source host's MAC from the congestion point's, EtherType 0x22E9, then
//!   the CNM PDU: version 0, the quantised feedback (6 bits), CPID = the switch's MAC + 2
//!   zero bytes, cnmQOffset and cnmQDelta 0 (the model sends only the quantised value),
//!   encapsulated priority = the class, encapsulated destination MAC = the sampled frame's
//!   destination host, encapsulated MSDU length 0 (no MSDU copied).
//! - Control frames are padded to the 60-byte minimum and captured whole; their original
//!   length is the simulated size (64 B, with the frame check sequence, which is not
//!   captured).
//!
//! **Memory**: records are kept in memory per port up to a cap (`[measure] pcap_max_bytes`,
//! default [`DEFAULT_MAX_BYTES`]); from the first frame that does not fit, the capture
//! stops and counts the frames it did not keep ([`PortCapture::not_captured`]), so a
//! capture is always a whole prefix in time of the port's traffic.

use crate::base::ids::{FlowId, NodeId};
use crate::base::packet::{flags, Ecn, Kind, Packet};

/// Nanosecond-resolution libpcap magic number.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Snapshot length written in the file header (the captured lengths are far below it).
pub const SNAPLEN: u32 = 262_144;
/// Default cap on one port's capture in memory (file header and records).
pub const DEFAULT_MAX_BYTES: u64 = 64 << 20;
/// Bytes of the libpcap file header and of a record header.
pub const FILE_HEADER_BYTES: usize = 24;
pub const RECORD_HEADER_BYTES: usize = 16;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// IEEE 802.3 MAC Control (PAUSE, PFC).
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// IEEE 802.1Qau congestion notification.
pub const ETHERTYPE_CN: u16 = 0x22E9;
/// Destination of MAC Control frames (IEEE 802.3 Annex 31B).
pub const MAC_CONTROL_DA: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
pub const OPCODE_PAUSE: u16 = 0x0001;
pub const OPCODE_PFC: u16 = 0x0101;
/// TCP/UDP port of the receiving side of every flow.
pub const RECEIVER_PORT: u16 = 5001;
/// The 16-bit window written on every TCP segment.
pub const TCP_WINDOW: u16 = 65535;
/// Minimum Ethernet frame without its frame check sequence.
const MIN_FRAME: usize = 60;
const ETH: usize = 14;

/// MAC address of node `node`: locally administered unicast `02:00:` + the id.
pub fn mac(node: NodeId) -> [u8; 6] {
    let b = node.0.to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

/// IPv4 address of node `node`: `10.0.0.0` + the id's low 24 bits.
pub fn ipv4(node: NodeId) -> [u8; 4] {
    let b = node.0.to_be_bytes();
    [10, b[1], b[2], b[3]]
}

/// TCP/UDP port of the sending side of flow (or app: a UDP datagram carries its app in
/// the flow field) `flow`.
pub fn sender_port(flow: FlowId) -> u16 {
    (1024 + flow.0 % 64512) as u16
}

/// The capture of one port: a libpcap file being written in memory.
#[derive(Clone, Debug)]
pub struct PortCapture {
    /// Node of the port and the node at the far end of its link (Ethernet addresses).
    node: NodeId,
    peer: NodeId,
    max_bytes: usize,
    /// File header and the records so far.
    buf: Vec<u8>,
    /// Frames captured, and frames not captured once the cap was reached.
    pub frames: u64,
    pub not_captured: u64,
}

impl PortCapture {
    pub fn new(node: NodeId, peer: NodeId, max_bytes: u64) -> PortCapture {
        let mut buf = Vec::with_capacity(4096);
        buf.extend_from_slice(&MAGIC_NS.to_le_bytes());
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        buf.extend_from_slice(&SNAPLEN.to_le_bytes());
        buf.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        PortCapture {
            node,
            peer,
            max_bytes: max_bytes.min(usize::MAX as u64) as usize,
            buf,
            frames: 0,
            not_captured: 0,
        }
    }

    /// Record `p`, whose transmission starts at `now_ps` (picoseconds). Kept out of line:
    /// the port's transmit path pays one pointer test when capture is off.
    #[inline(never)]
    pub fn record(&mut self, now_ps: u64, p: &Packet) {
        if self.not_captured > 0 {
            self.not_captured += 1;
            return;
        }
        let start = self.buf.len();
        self.buf.extend_from_slice(&[0; RECORD_HEADER_BYTES]);
        let orig = write_frame(p, self.node, self.peer, &mut self.buf);
        let incl = self.buf.len() - start - RECORD_HEADER_BYTES;
        if self.buf.len() > self.max_bytes {
            self.buf.truncate(start);
            self.not_captured = 1;
            return;
        }
        let ns = now_ps / 1000;
        let h = &mut self.buf[start..start + RECORD_HEADER_BYTES];
        h[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(incl as u32).to_le_bytes());
        h[12..16].copy_from_slice(&orig.max(incl as u32).to_le_bytes());
        self.frames += 1;
    }

    /// The file so far (header and records).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The file, consuming the capture.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

/// Append the headers of `p` sent from node `node` to node `peer` as an Ethernet frame;
/// returns the frame's length on the wire (without the frame check sequence for IP
/// packets, with it for control frames, as the model counts them).
pub fn write_frame(p: &Packet, node: NodeId, peer: NodeId, out: &mut Vec<u8>) -> u32 {
    match p.kind {
        Kind::Pause => {
            let start = ethernet(out, MAC_CONTROL_DA, mac(node), ETHERTYPE_MAC_CONTROL);
            let quanta = p.pause_quanta();
            if let Some(prio) = p.pause_priority() {
                let prio = (prio & 7) as usize;
                put16(out, OPCODE_PFC);
                put16(out, 1 << prio);
                for i in 0..8 {
                    put16(out, if i == prio { quanta } else { 0 });
                }
            } else {
                put16(out, OPCODE_PAUSE);
                put16(out, quanta);
            }
            pad(out, start);
            p.size
        }
        Kind::Cnm => {
            let start = ethernet(out, mac(p.dst), mac(p.src), ETHERTYPE_CN);
            // Version 0 (4 bits), ReservedV (6 bits), QntzFb (6 bits).
            put16(out, p.cnm_feedback().min(63) as u16);
            out.extend_from_slice(&mac(p.src)); // CPID: the CP's MAC + 2 bytes
            put16(out, 0);
            put16(out, 0); // cnmQOffset
            put16(out, 0); // cnmQDelta
            put16(out, (p.class & 7) as u16); // encapsulated priority
            out.extend_from_slice(&mac(p.cnm_sampled_dst())); // encapsulated DA
            put16(out, 0); // encapsulated MSDU length (none copied)
            pad(out, start);
            p.size
        }
        _ => {
            let start = ethernet(out, mac(peer), mac(node), ETHERTYPE_IPV4);
            let ip = out.len();
            out.extend_from_slice(&[0; 20]);
            let (proto, l4_len) = if p.kind == Kind::Udp {
                (17u8, udp(out, p))
            } else {
                (6u8, tcp(out, p))
            };
            let total = 20 + l4_len;
            ipv4_header(&mut out[ip..ip + 20], p, proto, total);
            let l4 = ip + 20;
            let sum = l4_checksum(&out[ip..ip + 20], &out[l4..], l4_len);
            let at = if proto == 6 { l4 + 16 } else { l4 + 6 };
            let sum = if proto == 17 && sum == 0 { 0xffff } else { sum };
            out[at..at + 2].copy_from_slice(&sum.to_be_bytes());
            debug_assert!(out.len() >= start + ETH + 20);
            (ETH + total.min(u16::MAX as usize)) as u32
        }
    }
}

fn put16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Ethernet II header; returns where the frame starts.
fn ethernet(out: &mut Vec<u8>, dst: [u8; 6], src: [u8; 6], ethertype: u16) -> usize {
    let start = out.len();
    out.extend_from_slice(&dst);
    out.extend_from_slice(&src);
    put16(out, ethertype);
    start
}

/// Zero padding to the minimum frame length.
fn pad(out: &mut Vec<u8>, start: usize) {
    out.resize(out.len().max(start + MIN_FRAME), 0);
}

/// RFC 791 header in `h` (20 bytes, checksum included).
fn ipv4_header(h: &mut [u8], p: &Packet, proto: u8, total: usize) {
    let ecn = match p.ecn {
        Ecn::NotEct => 0,
        Ecn::Ect0 => 2,
        Ecn::Ce => 3,
    };
    h[0] = 0x45;
    h[1] = ((p.class & 7) << 5) | ecn; // DSCP CSn, ECN (RFC 3168 §5)
    h[2..4].copy_from_slice(&(total.min(u16::MAX as usize) as u16).to_be_bytes());
    h[4..6].copy_from_slice(&[0, 0]); // identification
    h[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF
    h[8] = 64;
    h[9] = proto;
    h[10..12].copy_from_slice(&[0, 0]);
    h[12..16].copy_from_slice(&ipv4(p.src));
    h[16..20].copy_from_slice(&ipv4(p.dst));
    let sum = !fold(ones_sum(h, 0));
    h[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// One's-complement sum of 16-bit words (RFC 1071), unfolded.
fn ones_sum(bytes: &[u8], mut acc: u64) -> u64 {
    let mut it = bytes.chunks_exact(2);
    for w in &mut it {
        acc += u16::from_be_bytes([w[0], w[1]]) as u64;
    }
    if let [b] = it.remainder() {
        acc += (*b as u64) << 8;
    }
    acc
}

fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// TCP/UDP checksum over the pseudo-header, the header bytes `l4` and a zero payload of
/// `l4_len - l4.len()` bytes (zeros add nothing but their length in the pseudo-header).
fn l4_checksum(ip: &[u8], l4: &[u8], l4_len: usize) -> u16 {
    let mut acc = ones_sum(&ip[12..20], 0);
    acc += ip[9] as u64;
    acc += l4_len as u64;
    acc = ones_sum(l4, acc);
    !fold(acc)
}

/// Whether the segment is sent by the flow's receiver.
fn from_receiver(p: &Packet) -> bool {
    matches!(p.kind, Kind::Ack | Kind::SynAck)
}

/// UDP header (RFC 768) with a zero checksum (filled by the caller); returns the datagram
/// length.
fn udp(out: &mut Vec<u8>, p: &Packet) -> usize {
    let (a, b) = (sender_port(p.flow), RECEIVER_PORT);
    let (sp, dp) = if p.flags & flags::PING_REPLY != 0 {
        (b, a)
    } else {
        (a, b)
    };
    let len = 8 + p.payload as usize;
    put16(out, sp);
    put16(out, dp);
    put16(out, len.min(u16::MAX as usize) as u16);
    put16(out, 0);
    len
}

/// Microseconds of a picosecond time, as a 32-bit timestamp clock.
fn ts_us(ps: u64) -> u32 {
    (ps / 1_000_000) as u32
}

/// TCP header (RFC 793) with its options and a zero checksum (filled by the caller);
/// returns the segment length (header + payload).
fn tcp(out: &mut Vec<u8>, p: &Packet) -> usize {
    const FIN: u8 = 0x01;
    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;
    const ECE: u8 = 0x40;
    const CWR: u8 = 0x80;
    let rx = from_receiver(p);
    let (sp, dp) = if rx {
        (RECEIVER_PORT, sender_port(p.flow))
    } else {
        (sender_port(p.flow), RECEIVER_PORT)
    };
    let (seq, ack, mut fl) = match p.kind {
        Kind::Syn => (0u64, 0u64, SYN),
        Kind::SynAck => (0, 1 + p.ack, SYN | ACK),
        Kind::Ack => (1, 1 + p.ack, ACK),
        _ => (1 + p.seq, 1, ACK),
    };
    if p.flags & flags::ECE != 0 {
        fl |= ECE;
    }
    if p.flags & flags::CWR != 0 {
        fl |= CWR;
    }
    let _ = FIN; // connections are never closed in the model
    let counted = p.size.saturating_sub(p.payload);
    let ts = counted >= 40 + crate::model::tcp::TS_OPTION_BYTES;
    // Raw SACK entries (RFC 2883 D-SACK first): a reversed entry lies below `ack`.
    let mut sack = [(0u64, 0u64); 3];
    let mut n = 0;
    if rx {
        for &(a, b) in &p.sack.0 {
            if b > a {
                sack[n] = (p.ack + a as u64, p.ack + b as u64);
                n += 1;
            } else if b < a {
                sack[n] = (p.ack - a as u64, p.ack - b as u64);
                n += 1;
            }
        }
    }
    let opts = if ts { 12 } else { 0 } + if n > 0 { 4 + 8 * n } else { 0 };
    let hlen = 20 + opts;
    put16(out, sp);
    put16(out, dp);
    put32(out, seq as u32);
    put32(out, ack as u32);
    out.push(((hlen / 4) as u8) << 4);
    out.push(fl);
    put16(out, TCP_WINDOW);
    put16(out, 0); // checksum
    put16(out, 0); // urgent pointer
    if ts {
        // NOP, NOP, kind 8 length 10 (RFC 7323 §3 and Appendix A layout).
        out.extend_from_slice(&[1, 1, 8, 10]);
        put32(out, ts_us(p.sent_time.0));
        let ecr = if rx && p.seq > 0 { ts_us(p.seq - 1) } else { 0 };
        put32(out, ecr);
    }
    if n > 0 {
        out.extend_from_slice(&[1, 1, 5, (2 + 8 * n) as u8]);
        for &(a, b) in &sack[..n] {
            put32(out, (1 + a) as u32);
            put32(out, (1 + b) as u32);
        }
    }
    hlen + p.payload as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::packet::SackBlocks;
    use crate::base::units::SimTime;

    fn pkt(kind: Kind) -> Packet {
        Packet::new(kind, FlowId(3), (NodeId(1), NodeId(2)), 40, 0)
    }

    fn frame(p: &Packet) -> (Vec<u8>, u32) {
        let mut v = Vec::new();
        let orig = write_frame(p, NodeId(7), NodeId(8), &mut v);
        (v, orig)
    }

    /// RFC 1071: summing a header with its checksum in place gives 0xffff.
    fn verifies(bytes: &[u8]) -> bool {
        fold(ones_sum(bytes, 0)) == 0xffff
    }

    #[test]
    fn data_segment_bytes() {
        let p = Packet {
            seq: 2920,
            size: 1500,
            payload: 1460,
            kind: Kind::Data,
            ecn: Ecn::Ce,
            flags: flags::CWR,
            class: 1,
            ..pkt(Kind::Data)
        };
        let (f, orig) = frame(&p);
        assert_eq!(f.len(), 14 + 20 + 20, "headers only");
        assert_eq!(orig, 1514);
        // Ethernet: to node 8, from node 7, IPv4.
        assert_eq!(&f[0..6], &[2, 0, 0, 0, 0, 8]);
        assert_eq!(&f[6..12], &[2, 0, 0, 0, 0, 7]);
        assert_eq!(&f[12..14], &[0x08, 0x00]);
        let ip = &f[14..34];
        #[rustfmt::skip]
        let want_ip = [
            0x45, (1 << 5) | 3, 0x05, 0xdc, 0, 0, 0x40, 0, 64, 6, 0, 0,
            10, 0, 0, 1, 10, 0, 0, 2,
        ];
        assert_eq!(&ip[..10], &want_ip[..10]);
        assert_eq!(&ip[12..], &want_ip[12..]);
        assert!(verifies(ip), "IPv4 header checksum");
        // Hand-computed checksum of this header.
        let mut z = want_ip;
        z[10] = 0;
        z[11] = 0;
        assert_eq!(u16::from_be_bytes([ip[10], ip[11]]), !fold(ones_sum(&z, 0)));
        let t = &f[34..54];
        assert_eq!(&t[0..4], &[0x04, 0x03, 0x13, 0x89]); // 1027 -> 5001
        assert_eq!(&t[4..8], &2921u32.to_be_bytes());
        assert_eq!(&t[8..12], &1u32.to_be_bytes());
        assert_eq!(t[12], 5 << 4);
        assert_eq!(t[13], 0x10 | 0x80, "ACK|CWR");
        assert_eq!(&t[14..16], &[0xff, 0xff]);
        // TCP checksum: pseudo-header + header + 1460 zero bytes verify.
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&ip[12..20]);
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&1480u16.to_be_bytes());
        pseudo.extend_from_slice(t);
        pseudo.resize(pseudo.len() + 1460, 0);
        assert!(verifies(&pseudo), "TCP checksum");
    }

    #[test]
    fn ack_with_timestamps_and_sack_option_layout() {
        // ACK 1000 with blocks [3000, 4000) and a D-SACK [500, 900) below the ACK.
        let sack = SackBlocks::encode(1000, &[(3000, 4000)]).with_dsack(1000, (500, 900));
        let p = Packet {
            src: NodeId(2),
            dst: NodeId(1),
            ack: 1000,
            seq: 5_000_000 + 1, // TSecr + 1, in ps: 5 µs
            size: 52,
            kind: Kind::Ack,
            flags: flags::ECE,
            ecn: Ecn::Ect0,
            sent_time: SimTime(12_345_678), // 12 µs
            sack,
            ..pkt(Kind::Ack)
        };
        let (f, orig) = frame(&p);
        let tcp_len = 20 + 12 + 4 + 16;
        assert_eq!(f.len(), 14 + 20 + tcp_len);
        assert_eq!(orig as usize, f.len());
        let ip = &f[14..34];
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as usize, 20 + tcp_len);
        assert_eq!(ip[1] & 3, 2, "ECT(0)");
        assert!(verifies(ip));
        let t = &f[34..];
        assert_eq!(&t[0..4], &[0x13, 0x89, 0x04, 0x03]); // 5001 -> 1027
        assert_eq!(&t[4..8], &1u32.to_be_bytes());
        assert_eq!(&t[8..12], &1001u32.to_be_bytes());
        assert_eq!(t[12] >> 4, (tcp_len / 4) as u8);
        assert_eq!(t[13], 0x10 | 0x40, "ACK|ECE");
        #[rustfmt::skip]
        let opts = [
            1, 1, 8, 10, 0, 0, 0, 12, 0, 0, 0, 5,
            1, 1, 5, 18, 0, 0, 0x01, 0xf5, 0, 0, 0x03, 0x85, // D-SACK 501..901
            0, 0, 0x0b, 0xb9, 0, 0, 0x0f, 0xa1, // 3001..4001
        ];
        assert_eq!(&t[20..], &opts);
        let mut pseudo = ip[12..20].to_vec();
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&(tcp_len as u16).to_be_bytes());
        pseudo.extend_from_slice(t);
        assert!(verifies(&pseudo));
    }

    #[test]
    fn syn_synack_and_udp() {
        let (f, _) = frame(&pkt(Kind::Syn));
        assert_eq!(f[34 + 13], 0x02);
        assert_eq!(&f[34 + 4..34 + 12], &[0; 8]);
        let (f, _) = frame(&pkt(Kind::SynAck));
        assert_eq!(f[34 + 13], 0x12);
        assert_eq!(&f[34 + 8..34 + 12], &1u32.to_be_bytes());
        let p = Packet {
            size: 1028,
            payload: 1000,
            kind: Kind::Udp,
            ..pkt(Kind::Udp)
        };
        let (f, orig) = frame(&p);
        assert_eq!((f.len(), orig), (14 + 28, 14 + 1028));
        assert_eq!(f[14 + 9], 17);
        assert_eq!(&f[34..40], &[0x04, 0x03, 0x13, 0x89, 0x03, 0xf0]);
        let mut pseudo = f[26..34].to_vec();
        pseudo.extend_from_slice(&[0, 17, 0x03, 0xf0]);
        pseudo.extend_from_slice(&f[34..42]);
        pseudo.resize(pseudo.len() + 1000, 0);
        assert!(verifies(&pseudo));
    }

    #[test]
    fn pause_pfc_and_cnm_frames() {
        let pause = Packet::pause((NodeId(1), NodeId(2)), 64, 0xffff, None, SimTime::ZERO);
        let (f, orig) = frame(&pause);
        assert_eq!((f.len(), orig), (60, 64));
        assert_eq!(&f[0..6], &MAC_CONTROL_DA);
        assert_eq!(&f[12..18], &[0x88, 0x08, 0x00, 0x01, 0xff, 0xff]);
        assert!(f[18..].iter().all(|&b| b == 0));
        let pfc = Packet::pause((NodeId(1), NodeId(2)), 64, 500, Some(3), SimTime::ZERO);
        let (f, _) = frame(&pfc);
        assert_eq!(&f[12..18], &[0x88, 0x08, 0x01, 0x01, 0x00, 0x08]);
        let slots: Vec<u16> = f[18..34]
            .chunks(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(slots, [0, 0, 0, 500, 0, 0, 0, 0]);
        let sampled = Packet {
            src: NodeId(1),
            dst: NodeId(2),
            class: 5,
            ..pkt(Kind::Data)
        };
        let cnm = Packet::cnm(&sampled, NodeId(9), 64, 17, SimTime::ZERO);
        let (f, orig) = frame(&cnm);
        assert_eq!((f.len(), orig), (60, 64));
        assert_eq!(&f[0..6], &mac(NodeId(1)));
        assert_eq!(&f[6..12], &mac(NodeId(9)));
        assert_eq!(&f[12..16], &[0x22, 0xe9, 0, 17]);
        assert_eq!(&f[16..22], &mac(NodeId(9)));
        assert_eq!(&f[28..30], &[0, 5]);
        assert_eq!(&f[30..36], &mac(NodeId(2)));
    }

    #[test]
    fn file_and_record_headers_and_the_cap() {
        let p = Packet {
            size: 1500,
            payload: 1460,
            ..pkt(Kind::Data)
        };
        let mut c = PortCapture::new(
            NodeId(7),
            NodeId(8),
            (FILE_HEADER_BYTES + 2 * (16 + 54)) as u64,
        );
        c.record(1_500_000_123_456, &p); // 1.5 s + 123.456 ns
        let b = c.bytes();
        assert_eq!(&b[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(&b[20..24], &1u32.to_le_bytes());
        let r = &b[24..40];
        assert_eq!(&r[0..4], &1u32.to_le_bytes());
        assert_eq!(&r[4..8], &500_000_123u32.to_le_bytes());
        assert_eq!(&r[8..12], &54u32.to_le_bytes());
        assert_eq!(&r[12..16], &1514u32.to_le_bytes());
        c.record(2, &p);
        c.record(3, &p);
        c.record(
            4,
            &Packet {
                size: 40,
                ..pkt(Kind::Ack)
            },
        );
        assert_eq!((c.frames, c.not_captured), (2, 2));
        assert_eq!(c.bytes().len(), FILE_HEADER_BYTES + 2 * 70);
    }
}
