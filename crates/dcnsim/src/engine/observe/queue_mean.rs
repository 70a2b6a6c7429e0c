//! Exact time-averaged queue length of one port (`[measure] mean_queue_port`).
//!
//! The mean is the integral of the queue length over the run divided by the run's length.
//! By Little's law that integral equals the sum, over every packet that waited in the queue,
//! of its size (or 1, for packets) times its waiting time: a packet counts from its enqueue
//! (`Packet::enq_time`) to the moment it leaves the queue for the transmitter, and packets
//! still waiting at the end count up to the end. So the meter is touched once per packet,
//! at dequeue, on the measured port only — no per-change bookkeeping on the hot path, and
//! nothing at all when the key is absent. The queue measured is the one the port's
//! `queued_bytes` tracks: waiting packets, not the one being serialised (a packet that finds
//! the port idle goes straight to the wire and waits zero time). Used for the thesis's
//! "mean queue < 1 packet" of Devkota 2010 Fig. 20.

use crate::base::ids::PortId;
use crate::base::packet::Packet;
use crate::base::units::SimTime;

/// Integrals of the waiting queue of port `port`, in byte·ps and packet·ps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueMean {
    pub port: PortId,
    pub byte_ps: u128,
    pub pkt_ps: u128,
}

impl QueueMean {
    pub fn new(port: PortId) -> QueueMean {
        QueueMean {
            port,
            byte_ps: 0,
            pkt_ps: 0,
        }
    }

    /// Packet `p` (stamped with its enqueue time) leaves port `pid`'s queue at `now`.
    #[inline]
    pub fn on_leave(&mut self, pid: PortId, now: SimTime, p: &Packet) {
        if pid == self.port {
            self.add(now, p.enq_time, p.size);
        }
    }

    fn add(&mut self, now: SimTime, enq: SimTime, size: u32) {
        let wait = now.0.saturating_sub(enq.0) as u128;
        self.byte_ps += wait * size as u128;
        self.pkt_ps += wait;
    }

    /// (mean bytes, mean packets) over [0, end], counting `waiting` (packets still queued at
    /// `end`) up to `end`.
    pub fn means<'a>(&self, end: SimTime, waiting: impl Iterator<Item = &'a Packet>) -> (f64, f64) {
        let mut m = self.clone();
        for p in waiting {
            m.add(end, p.enq_time, p.size);
        }
        if end.0 == 0 {
            return (0.0, 0.0);
        }
        (
            m.byte_ps as f64 / end.0 as f64,
            m.pkt_ps as f64 / end.0 as f64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::ids::{FlowId, NodeId};
    use crate::base::packet::Kind;

    fn pkt(enq_us: u64, size: u32) -> Packet {
        let ends = (NodeId(0), NodeId(1));
        Packet {
            enq_time: SimTime::from_us(enq_us),
            ..Packet::new(Kind::Data, FlowId(0), ends, size, size.saturating_sub(40))
        }
    }

    #[test]
    fn scripted_waits_give_the_exact_time_average() {
        // Over 10 us: a 1500-B packet waits 0..4 us, a 500-B one 2..6 us, another port's
        // packet is ignored, and a 1000-B packet enqueued at 8 us is still waiting at 10 us.
        // Queue: 1500 B on [0,2), 2000 B on [2,4), 500 B on [4,6), 0 on [6,8), 1000 B on
        // [8,10) -> (3000 + 4000 + 1000 + 0 + 2000) / 10 = 1000 B; packets (2+4+2+0+2)/10 = 1.
        let mut m = QueueMean::new(PortId(3));
        m.on_leave(PortId(3), SimTime::from_us(4), &pkt(0, 1500));
        m.on_leave(PortId(3), SimTime::from_us(6), &pkt(2, 500));
        m.on_leave(PortId(4), SimTime::from_us(9), &pkt(0, 9000));
        let rest = [pkt(8, 1000)];
        let (b, n) = m.means(SimTime::from_us(10), rest.iter());
        assert!((b - 1000.0).abs() < 1e-9, "{b}");
        assert!((n - 1.0).abs() < 1e-12, "{n}");
        // `means` does not fold the waiting packets into the meter itself.
        assert_eq!(m.pkt_ps, 8_000_000);
    }

    #[test]
    fn a_packet_that_never_waits_adds_nothing() {
        let mut m = QueueMean::new(PortId(0));
        m.on_leave(PortId(0), SimTime::from_us(5), &pkt(5, 1500));
        assert_eq!(m.means(SimTime::from_us(10), [].iter()), (0.0, 0.0));
        assert_eq!(m.means(SimTime::ZERO, [].iter()), (0.0, 0.0));
    }
}
