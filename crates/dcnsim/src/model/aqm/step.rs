//! The DCTCP step marker (DCTCP paper, Alizadeh et al., SIGCOMM 2010, §3.1; docs/models.md §3.1):
//! `Mark` if the queue *including the arrival* exceeds K (packets or bytes). A packet that
//! is not ECN-capable then passes (as TCN-NS2's marking and the ns-2 DCTCP patch); only the
//! buffer limit applies to it ([`MarkReason::if_not_ect`]). Stateless: one instance serves
//! a port's total backlog or a class queue's backlog alike, at enqueue or at dequeue.

use super::{Backlog, Build, Built, Entry, KeyError, QueueUnit, Scope, Verdict};
use crate::base::packet::Packet;

#[cfg(doc)]
use super::MarkReason;

/// DCTCP step marking.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub k: u64,
    pub unit: QueueUnit,
}

impl Step {
    /// Decide for `pkt` given the queue `b` *excluding* it.
    #[inline]
    pub fn decide(&self, pkt: &Packet, b: Backlog) -> Verdict {
        let q = match self.unit {
            QueueUnit::Packets => b.pkts + 1,
            QueueUnit::Bytes => b.bytes + pkt.size as u64,
        };
        if q > self.k {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

/// The RED keys, refused by a step table.
pub(crate) const RED_ONLY: [&str; 9] = [
    "min_th",
    "max_th",
    "max_p",
    "w_q",
    "gentle",
    "wait",
    "count",
    "queue",
    "mean_pkt_size",
];

/// `kind = "step"`: K from `k` (the scenario's default: the DCTCP paper's §3.5 values,
/// 20 packets below 10 Gb/s and 65 from 10 Gb/s up; docs/models.md §3.1).
fn build(b: &Build) -> Result<Built, KeyError> {
    if let Some(k) = RED_ONLY.iter().find(|k| b.keys.given(k)) {
        return Err(KeyError::new(k, "only for kind = \"red\""));
    }
    let (k, unit) = b.keys.k;
    Ok(Built::new(super::Aqm::Step(Step { k, unit }), b.keys.at))
}

/// Registry entry: per port, or one (stateless) instance per class queue.
pub const ENTRY: Entry = Entry {
    name: "step",
    port: true,
    queues: Some(Scope::PerQueue),
    build,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::packet::Ecn;
    use crate::model::aqm::testutil::pkt;

    fn b(pkts: u64, bytes: u64) -> Backlog {
        Backlog { pkts, bytes }
    }

    #[test]
    fn step_marks_exactly_the_ect_packets_above_k() {
        let a = Step {
            k: 3,
            unit: QueueUnit::Packets,
        };
        // Queue (excluding the arrival) 0..5: including it 1..6; K = 3 → marks at 4, 5, 6.
        let v: Vec<Verdict> = (0..6)
            .map(|q| a.decide(&pkt(Ecn::Ect0), b(q, q * 1500)))
            .collect();
        use Verdict::*;
        assert_eq!(v, vec![Pass, Pass, Pass, Mark, Mark, Mark]);
        // The verdict does not look at the codepoint (the port lets non-ECT packets pass).
        assert_eq!(a.decide(&pkt(Ecn::NotEct), b(10, 0)), Mark);
        // Bytes: K = 4500 B; 2 queued + 1500 = 4500 is not above K, 3 queued is.
        let s = Step {
            k: 4500,
            unit: QueueUnit::Bytes,
        };
        assert_eq!(s.decide(&pkt(Ecn::Ect0), b(2, 3000)), Pass);
        assert_eq!(s.decide(&pkt(Ecn::Ect0), b(3, 4500)), Mark);
    }
}
