//! Buffer admission for multi-queue ports (docs/models.md §5.7, shared buffers):
//! - **complete sharing**: one byte pool per port shared first-come-first-served by the
//!   port's queues (TCN / MQ-ECN ns-2 sims: `qlim × 1500 B`, 200 × 1500 = 300 KB for 8 queues);
//! - **static per-queue limits**;
//! - **dynamic threshold** (Choudhury & Hahne, IEEE/ACM ToN 1998) over a switch-wide shared
//!   pool of B bytes: admit to queue i iff `q_i < α·(B − Σ_j q_j)`; in steady state each of
//!   N congested queues holds α·B/(1 + N·α).
//!
//! The port calls [`Admission::admit`] before `MultiQueue::enqueue`; with the dynamic
//! threshold it also keeps the switch's [`SharedPool`] up to date (`take` on admit,
//! `give_back` when the packet leaves the queue). Limits count bytes waiting in queues (the
//! packet being serialised has left), as in `engine/net/mod.rs`; a packet is refused if it would
//! overflow: `used + size > limit`.

/// Default per-port complete-sharing buffer: 200 packets × 1500 B = 300 KB (TCN sims,
/// docs/models.md §5.7).
pub const DEFAULT_PORT_BUFFER_BYTES: u64 = 200 * 1500;
/// Default DT α = 1 (docs/models.md §5.7; values from 1/8 to 8 are usual).
pub const DEFAULT_DT_ALPHA: f64 = 1.0;

/// How a port admits packets.
#[derive(Clone, Debug, PartialEq)]
pub enum BufferPolicy {
    /// One byte limit for the whole port, shared FCFS by its queues.
    CompleteSharing { limit: u64 },
    /// A byte limit per queue.
    StaticPerQueue { limits: Vec<u64> },
    /// Choudhury–Hahne dynamic threshold with factor `alpha` over the switch-wide
    /// [`SharedPool`].
    DynamicThreshold { alpha: f64 },
}

impl Default for BufferPolicy {
    fn default() -> Self {
        BufferPolicy::CompleteSharing {
            limit: DEFAULT_PORT_BUFFER_BYTES,
        }
    }
}

/// Switch-wide shared buffer pool (bytes), shared by every DT port of a switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedPool {
    capacity: u64,
    used: u64,
}

impl SharedPool {
    pub fn new(capacity: u64) -> Result<SharedPool, String> {
        if capacity == 0 {
            return Err("shared buffer pool must be > 0 bytes".into());
        }
        Ok(SharedPool { capacity, used: 0 })
    }
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    pub fn used(&self) -> u64 {
        self.used
    }
    pub fn free(&self) -> u64 {
        self.capacity - self.used
    }
    /// Account for an admitted packet.
    pub fn take(&mut self, size: u32) {
        self.used = (self.used + size as u64).min(self.capacity);
    }
    /// Account for a packet leaving its queue (dequeued or dropped later).
    pub fn give_back(&mut self, size: u32) {
        self.used = self.used.saturating_sub(size as u64);
    }
}

/// A port's admission rule (validated).
#[derive(Clone, Debug, PartialEq)]
pub struct Admission {
    policy: BufferPolicy,
}

impl Admission {
    /// `queues` is the port's number of queues (checked against static limits).
    pub fn new(policy: BufferPolicy, queues: usize) -> Result<Admission, String> {
        match &policy {
            BufferPolicy::CompleteSharing { limit } if *limit == 0 => {
                return Err("port buffer limit must be > 0 bytes".into())
            }
            BufferPolicy::StaticPerQueue { limits } if limits.len() != queues => {
                return Err(format!(
                    "static buffer: {} per-queue limits for {queues} queues",
                    limits.len()
                ))
            }
            BufferPolicy::DynamicThreshold { alpha } if !(alpha.is_finite() && *alpha > 0.0) => {
                return Err(format!("DT alpha {alpha} must be finite and > 0"))
            }
            _ => {}
        }
        Ok(Admission { policy })
    }

    pub fn policy(&self) -> &BufferPolicy {
        &self.policy
    }

    /// Current DT threshold α·(B − Σq) in bytes (None for the other policies).
    pub fn dt_threshold(&self, pool: &SharedPool) -> Option<f64> {
        match self.policy {
            BufferPolicy::DynamicThreshold { alpha } => Some(alpha * pool.free() as f64),
            _ => None,
        }
    }

    /// May a packet of `size` bytes join queue `q` holding `q_bytes`, on a port holding
    /// `port_bytes`? `pool` is the switch-wide pool (needed only for DT; a DT port without
    /// a pool refuses everything). On `true` with DT the caller must `pool.take(size)`.
    pub fn admit(
        &self,
        q: usize,
        size: u32,
        q_bytes: u64,
        port_bytes: u64,
        pool: Option<&SharedPool>,
    ) -> bool {
        let size = size as u64;
        match &self.policy {
            BufferPolicy::CompleteSharing { limit } => port_bytes + size <= *limit,
            BufferPolicy::StaticPerQueue { limits } => {
                limits.get(q).is_some_and(|l| q_bytes + size <= *l)
            }
            BufferPolicy::DynamicThreshold { alpha } => match pool {
                Some(p) => {
                    (q_bytes as f64) < alpha * p.free() as f64 && p.used + size <= p.capacity
                }
                None => false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_sharing_admits_exactly_up_to_the_limit() {
        let a = Admission::new(BufferPolicy::CompleteSharing { limit: 3000 }, 8).unwrap();
        assert!(a.admit(0, 1500, 0, 1500, None));
        assert!(a.admit(7, 1500, 1500, 1500, None)); // 3000 exactly
        assert!(!a.admit(3, 1, 0, 3000, None));
        assert!(!a.admit(3, 1500, 0, 1501, None));
        // FCFS: one queue may take the whole port buffer.
        assert!(a.admit(5, 1000, 2000, 2000, None));
    }

    #[test]
    fn static_limits_are_per_queue() {
        let a = Admission::new(
            BufferPolicy::StaticPerQueue {
                limits: vec![3000, 1500],
            },
            2,
        )
        .unwrap();
        assert!(a.admit(0, 1500, 1500, 99_999, None));
        assert!(!a.admit(0, 1501, 1500, 0, None));
        assert!(a.admit(1, 1500, 0, 0, None));
        assert!(!a.admit(1, 1, 1500, 0, None));
        assert!(!a.admit(2, 1, 0, 0, None)); // no such queue
    }

    #[test]
    fn dt_admits_iff_below_alpha_times_free() {
        let a = Admission::new(BufferPolicy::DynamicThreshold { alpha: 2.0 }, 4).unwrap();
        let mut pool = SharedPool::new(10_000).unwrap();
        pool.take(6000); // free 4000, threshold 8000
        assert_eq!(a.dt_threshold(&pool), Some(8000.0));
        assert!(a.admit(0, 1000, 7999, 0, Some(&pool)));
        assert!(!a.admit(0, 1000, 8000, 0, Some(&pool))); // strict '<'
                                                          // Physical limit: the pool cannot overflow.
        assert!(a.admit(0, 4000, 0, 0, Some(&pool)));
        assert!(!a.admit(0, 4001, 0, 0, Some(&pool)));
        assert!(!a.admit(0, 1, 0, 0, None));
    }

    /// Scripted fill with no departures: N queues receive 100-B packets round robin until
    /// every queue is refused; each ends at α·B/(1 + N·α) within one packet.
    #[test]
    fn dt_converges_to_alpha_b_over_1_plus_n_alpha() {
        let b = 1_000_000u64;
        for &alpha in &[0.5, 1.0, 2.0, 8.0] {
            for n in [1usize, 2, 4, 8] {
                let a = Admission::new(BufferPolicy::DynamicThreshold { alpha }, n).unwrap();
                let mut pool = SharedPool::new(b).unwrap();
                let mut q = vec![0u64; n];
                loop {
                    let mut any = false;
                    for qi in q.iter_mut() {
                        if a.admit(0, 100, *qi, 0, Some(&pool)) {
                            *qi += 100;
                            pool.take(100);
                            any = true;
                        }
                    }
                    if !any {
                        break;
                    }
                }
                let want = alpha * b as f64 / (1.0 + n as f64 * alpha);
                for &qi in &q {
                    assert!(
                        (qi as f64 - want).abs() <= 100.0 * (1.0 + n as f64 * alpha),
                        "alpha {alpha} n {n}: {qi} vs {want}"
                    );
                }
                assert_eq!(pool.used(), q.iter().sum::<u64>());
            }
        }
    }

    #[test]
    fn bad_configs_are_rejected() {
        assert!(Admission::new(BufferPolicy::CompleteSharing { limit: 0 }, 1).is_err());
        assert!(Admission::new(BufferPolicy::StaticPerQueue { limits: vec![1] }, 2).is_err());
        assert!(Admission::new(BufferPolicy::DynamicThreshold { alpha: 0.0 }, 2).is_err());
        assert!(Admission::new(BufferPolicy::DynamicThreshold { alpha: f64::NAN }, 2).is_err());
        assert!(SharedPool::new(0).is_err());
        assert!(Admission::new(BufferPolicy::default(), 8).is_ok());
    }
}
