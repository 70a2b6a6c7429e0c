//! Dynamic PAUSE / PFC thresholds over a shared switch buffer, with reserved and headroom
//! bytes per ingress port × priority: how shared-memory switch MMUs decide to pause
//! (docs/models.md §2.5). An option beside the fixed watermarks of `pause.rs`, which holds
//! the paused flags and refresh timers and asks this module when to pause and resume.
//!
//! The switch's buffer of B bytes is split into three parts:
//! - **reserved**: `reserve` bytes guaranteed to every ingress port × priority, not counted
//!   against the shared pool;
//! - **headroom**: `headroom[input]` bytes per ingress port × priority, used only by the
//!   bytes that keep arriving after the pause was decided (the frames already on the wire,
//!   the PAUSE frame's own trip, the upstream's reaction time);
//! - **shared**: the rest, `S = B − Σ reserve − Σ headroom`, used first come first served.
//!
//! Per ingress port × priority ("priority group") the MMU counts the bytes buffered that
//! arrived there: `ingress` (reserved + shared part) and `hdrm` (headroom part). Its shared
//! bytes are `max(0, ingress − reserve)`. The pause threshold is a Choudhury–Hahne dynamic
//! threshold (Choudhury & Hahne, "Dynamic Queue Length Thresholds for Shared-Memory Packet
//! Switches", IEEE/ACM ToN 1998): `T = α · (S − shared_used)` with `α = 2^−shift`, so it falls
//! as the shared pool fills. The rules, as in the HPCC authors' ns-3 switch MMU
//! (`switch-mmu.cc`: `UpdateIngressAdmission`, `CheckIngressAdmission`, `CheckShouldPause`,
//! `CheckShouldResume`, `GetPfcThreshold`; Li et al., "HPCC: High Precision Congestion
//! Control", SIGCOMM 2019), restated:
//! - an arriving packet goes to the reserve while `ingress + size ≤ reserve`; else to the
//!   shared pool if its shared bytes after it stay `≤ T` (and the pool has room); else to the
//!   headroom if `hdrm + size ≤ headroom`; else it is **dropped** (a correctly sized lossless
//!   fabric shows none);
//! - pause when `hdrm > 0` or `shared ≥ T` (reaching the threshold pauses: exactly `α·free`);
//! - resume when `hdrm = 0` and (`shared = 0` or `shared + resume_offset ≤ T`);
//! - a departing packet's bytes leave the headroom first, then the shared part, then the
//!   reserve.
//!
//! The headroom can be given in bytes or sized per input link by [`auto_headroom`].

use crate::base::units::{RateBps, SimTime};

/// A PAUSE / PFC frame on the wire with preamble, SFD and inter-frame gap: 84 bytes (672
/// bit times, IEEE 802.3 Annex 31B; `pause.rs` holds the same facts, the `pause` module's
/// tests check that they agree, and this module does not import `pause`).
pub const PAUSE_FRAME_WIRE_BYTES: u64 = 84;
/// Bits in one pause quantum (IEEE 802.3 Annex 31B).
const QUANTUM_BITS: u64 = 512;

/// Default switch buffer for the dynamic threshold: 16 MiB (the HPCC ns-3 simulation's
/// `BUFFER_SIZE` default of 16, in MiB, `scratch/third.cc`; a Broadcom Tomahawk's shared
/// buffer is of that order).
pub const DEFAULT_BUFFER_BYTES: u64 = 16 * 1024 * 1024;
/// Default `shift`: α = 1/8 (HPCC ns-3 `scratch/third.cc`, "by default 1/8").
pub const DEFAULT_ALPHA_SHIFT: i8 = 3;
/// Default reserve per ingress port × priority: 4 KiB (HPCC ns-3 `SwitchMmu` constructor).
pub const DEFAULT_RESERVE_BYTES: u64 = 4 * 1024;
/// Default resume offset: 3 KiB (HPCC ns-3 `SwitchMmu` constructor, `resume_offset`).
pub const DEFAULT_RESUME_OFFSET_BYTES: u64 = 3 * 1024;
/// Default largest frame for the automatic headroom: 1500 B.
pub const DEFAULT_MTU_BYTES: u32 = 1500;
/// Allowed `shift` range: α from 8 (−3) down to 1/1024 (10).
pub const ALPHA_SHIFT_RANGE: std::ops::RangeInclusive<i8> = -3..=10;

/// How the headroom of each ingress port × priority is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadroomRule {
    /// A fixed number of bytes for every input.
    Bytes(u64),
    /// [`auto_headroom`] of each input's link rate and delay, for frames of `mtu` bytes.
    Auto { mtu: u32 },
}

/// Parameters of the dynamic threshold (docs/models.md §2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DynamicConfig {
    /// Total switch buffer B (bytes): reserved + headroom + shared.
    pub buffer_bytes: u64,
    /// α = 2^−shift (negative: α > 1).
    pub alpha_shift: i8,
    /// `Some(r)`: α grows with the ingress link's rate, one halving of the shift per doubling
    /// of the rate above `r`, down to a shift of 0 (α = 1) at most ([`alpha_shift_for`]).
    pub alpha_per_rate: Option<RateBps>,
    /// Guaranteed bytes per ingress port × priority.
    pub reserve_bytes: u64,
    /// Resume when the shared bytes are this far below the threshold.
    pub resume_offset_bytes: u64,
    pub headroom: HeadroomRule,
}

impl Default for DynamicConfig {
    fn default() -> Self {
        DynamicConfig {
            buffer_bytes: DEFAULT_BUFFER_BYTES,
            alpha_shift: DEFAULT_ALPHA_SHIFT,
            alpha_per_rate: None,
            reserve_bytes: DEFAULT_RESERVE_BYTES,
            resume_offset_bytes: DEFAULT_RESUME_OFFSET_BYTES,
            headroom: HeadroomRule::Auto {
                mtu: DEFAULT_MTU_BYTES,
            },
        }
    }
}

impl DynamicConfig {
    /// Check the parameters that do not depend on the switch; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        if !ALPHA_SHIFT_RANGE.contains(&self.alpha_shift) {
            return Err(format!(
                "pause: alpha_shift {} must be in {}..={} (alpha = 2^-shift)",
                self.alpha_shift,
                ALPHA_SHIFT_RANGE.start(),
                ALPHA_SHIFT_RANGE.end()
            ));
        }
        if self.buffer_bytes == 0 {
            return Err("pause: buffer must be positive".into());
        }
        if let HeadroomRule::Auto { mtu: 0 } = self.headroom {
            return Err("pause: mtu must be positive".into());
        }
        Ok(())
    }
}

/// Upper bound of the time a transmitter takes to stop after a PAUSE / PFC frame reached
/// it, in bit times of its link: IEEE 802.3 Annex 31B (Table 31B–1, the pause reaction
/// delay: 1, 2, 60, 80, 118, 394 and 905 pause quanta of 512 bit times at 100 Mb/s, 1, 10,
/// 25, 40, 100 and 400 Gb/s; the 10 Gb/s and faster values as listed in Cisco's PFC
/// headroom guidance). A rate between two rows takes the row above it.
pub fn response_bits(rate: RateBps) -> u64 {
    const ROWS: [(u64, u64); 7] = [
        (100_000_000, 1),
        (1_000_000_000, 2),
        (10_000_000_000, 60),
        (25_000_000_000, 80),
        (40_000_000_000, 118),
        (100_000_000_000, 394),
        (400_000_000_000, 905),
    ];
    let q = ROWS
        .iter()
        .find(|&&(r, _)| rate.0 <= r)
        .map_or(905, |&(_, q)| q);
    q * QUANTUM_BITS
}

/// The shift of an ingress link of `rate` with α per rate from `per_rate` (None: `shift`):
/// while the rate is above `per_rate` and the shift positive, the shift drops by one and
/// the rate halves (integer halving). So α is proportional to the link's rate up to α = 1:
/// at 1/8 for 100 Gb/s, a 400 Gb/s link gets 1/2. The HPCC authors' ns-3 simulator sets
/// its switches' PFC α so (`scratch/third.cc`, "set pfc alpha, proportional to link bw",
/// with the NIC rate as `per_rate`; Li et al., "HPCC: High Precision Congestion Control",
/// SIGCOMM 2019). A negative shift (α > 1) is kept.
pub fn alpha_shift_for(shift: i8, per_rate: Option<RateBps>, rate: RateBps) -> i8 {
    let Some(r) = per_rate else { return shift };
    let (mut s, mut rate) = (shift, rate.0);
    while rate > r.0 && s > 0 {
        s -= 1;
        rate /= 2;
    }
    s
}

/// Bytes a link of `rate` carries in `delay` (rounded up).
pub fn bytes_in_flight(rate: RateBps, delay: SimTime) -> u64 {
    let bits = rate.0 as u128 * delay.0 as u128;
    bits.div_ceil(8 * SimTime::PS_PER_S as u128) as u64
}

/// Headroom of one ingress port × priority on a link of `rate` and one-way (cable) `delay`
/// for frames of at most `mtu` bytes, after IEEE 802.1Qbb-2011 Annex N and Cisco's PFC
/// headroom guidance ("Priority Flow Control: Build Reliable Layer 2 Infrastructure", Cisco
/// white paper, 2009): what may still arrive after the switch decides to pause is
///
/// `2 × rate × delay` (the PAUSE frame's trip to the upstream and the last bytes' trip back)
/// `+ 2 × mtu` (a frame the switch has just started on the reverse link, delaying the PAUSE
/// frame, and one the upstream has just started and finishes)
/// `+ 84` (the PAUSE frame itself: 672 bit times with preamble and inter-frame gap)
/// `+ response_bits(rate) / 8` (the upstream's reaction time, [`response_bits`]).
///
/// The interface (PHY/MAC) delays of the guidance are left out: dcnsim has none. Example:
/// 10 Gb/s, 3 µs, 1500 B: 2 × 3750 + 2 × 1500 + 84 + 3840 = 14424 B.
pub fn auto_headroom(rate: RateBps, delay: SimTime, mtu: u32) -> u64 {
    2 * bytes_in_flight(rate, delay)
        + 2 * mtu as u64
        + PAUSE_FRAME_WIRE_BYTES
        + response_bits(rate).div_ceil(8)
}

/// Where an arriving packet is stored (or that it is dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Within the reserve, with `shared` of its bytes above it in the shared pool.
    Shared { shared: u64 },
    /// In the headroom.
    Headroom,
    /// Neither the shared pool nor the headroom has room.
    Drop,
}

/// Counters and state of one ingress port × priority.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// Bytes in the reserve and the shared pool.
    pub ingress: u64,
    /// Bytes in the headroom.
    pub hdrm: u64,
    /// Largest shared bytes seen.
    pub max_shared: u64,
    /// Largest headroom bytes seen.
    pub max_hdrm: u64,
    /// Packets and bytes refused.
    pub drops: u64,
    pub drop_bytes: u64,
}

/// The ingress accounting of one switch for the dynamic threshold. Groups are indexed
/// `input × classes + class` as in [`crate::model::l2::PauseWatermarks`]. No allocation after
/// [`IngressMmu::new`].
#[derive(Clone, Debug)]
pub struct IngressMmu {
    cfg: DynamicConfig,
    classes: usize,
    /// Per input: headroom bytes of each of its groups.
    headroom: Vec<u64>,
    /// Per input: its α's shift ([`alpha_shift_for`]).
    shift: Vec<i8>,
    /// Size of the shared pool S.
    shared_pool: u64,
    shared_used: u64,
    groups: Vec<Group>,
}

impl IngressMmu {
    /// Accounting for `rates.len()` inputs with `classes` priorities each, of which
    /// `lossless` are paused (the others never reach the accounting: their groups take no
    /// reserve and no headroom out of the buffer); `rates[i]` and `delays[i]` describe input
    /// `i`'s link (for the automatic headroom and α per rate). Fails if the reserves and
    /// headrooms leave no shared pool.
    pub fn new(
        cfg: DynamicConfig,
        classes: usize,
        lossless: usize,
        rates: &[RateBps],
        delays: &[SimTime],
    ) -> Result<IngressMmu, String> {
        cfg.validate()?;
        let headroom: Vec<u64> = (0..rates.len())
            .map(|i| match cfg.headroom {
                HeadroomRule::Bytes(b) => b,
                HeadroomRule::Auto { mtu } => {
                    auto_headroom(rates[i], delays.get(i).copied().unwrap_or_default(), mtu)
                }
            })
            .collect();
        let shift = (rates.iter())
            .map(|&r| alpha_shift_for(cfg.alpha_shift, cfg.alpha_per_rate, r))
            .collect();
        let groups = rates.len() * classes;
        let paused = rates.len() * lossless;
        let fixed =
            headroom.iter().sum::<u64>() * lossless as u64 + cfg.reserve_bytes * paused as u64;
        if fixed >= cfg.buffer_bytes {
            return Err(format!(
                "pause: buffer ({} B) must exceed the reserves and headrooms of its {paused} \
                 ingress port x priority groups ({fixed} B)",
                cfg.buffer_bytes
            ));
        }
        Ok(IngressMmu {
            cfg,
            classes,
            headroom,
            shift,
            shared_pool: cfg.buffer_bytes - fixed,
            shared_used: 0,
            groups: vec![Group::default(); groups],
        })
    }

    pub fn config(&self) -> &DynamicConfig {
        &self.cfg
    }

    /// Size of the shared pool S (bytes).
    pub fn shared_pool(&self) -> u64 {
        self.shared_pool
    }

    /// Shared bytes in use over all groups.
    pub fn shared_used(&self) -> u64 {
        self.shared_used
    }

    /// Headroom bytes of each group of `input`.
    pub fn headroom_of(&self, input: usize) -> u64 {
        self.headroom.get(input).copied().unwrap_or(0)
    }

    /// Group `idx`'s counters.
    pub fn group(&self, idx: usize) -> Group {
        self.groups.get(idx).copied().unwrap_or_default()
    }

    /// Number of groups (inputs × classes).
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// The pause threshold now of the groups of input 0: `α · (S − shared_used)` bytes.
    pub fn threshold(&self) -> u64 {
        self.threshold_of(0)
    }

    /// The pause threshold now of the groups of `input`, with its α.
    #[inline]
    pub fn threshold_of(&self, input: usize) -> u64 {
        let free = self.shared_pool - self.shared_used;
        let s = self
            .shift
            .get(input)
            .copied()
            .unwrap_or(self.cfg.alpha_shift);
        if s >= 0 {
            free >> s
        } else {
            free.saturating_mul(1 << (-s))
        }
    }

    /// Shared bytes of group `idx` (its bytes above the reserve, headroom excluded).
    pub fn shared(&self, idx: usize) -> u64 {
        self.groups[idx]
            .ingress
            .saturating_sub(self.cfg.reserve_bytes)
    }

    /// Where a packet of `size` bytes arriving in group `idx` would go.
    pub fn slot(&self, idx: usize, size: u32) -> Slot {
        let g = &self.groups[idx];
        let input = idx / self.classes;
        let size = size as u64;
        let after = (g.ingress + size).saturating_sub(self.cfg.reserve_bytes);
        let shared = after - self.shared(idx);
        if shared == 0
            || (after <= self.threshold_of(input) && self.shared_used + shared <= self.shared_pool)
        {
            return Slot::Shared { shared };
        }
        if g.hdrm + size <= self.headroom[input] {
            Slot::Headroom
        } else {
            Slot::Drop
        }
    }

    /// May a packet of `size` bytes be stored in group `idx`?
    pub fn admit(&self, idx: usize, size: u32) -> bool {
        self.slot(idx, size) != Slot::Drop
    }

    /// A refused packet of `size` bytes (counted).
    pub fn on_drop(&mut self, idx: usize, size: u32) {
        let g = &mut self.groups[idx];
        g.drops += 1;
        g.drop_bytes += size as u64;
    }

    /// A packet of `size` bytes was stored in group `idx` ([`IngressMmu::admit`] said yes; a
    /// packet that finds no room is counted as a drop here).
    pub fn on_arrival(&mut self, idx: usize, size: u32) {
        match self.slot(idx, size) {
            Slot::Shared { shared } => {
                self.shared_used += shared;
                let g = &mut self.groups[idx];
                g.ingress += size as u64;
            }
            Slot::Headroom => self.groups[idx].hdrm += size as u64,
            Slot::Drop => return self.on_drop(idx, size),
        }
        let sh = self.shared(idx);
        let g = &mut self.groups[idx];
        g.max_shared = g.max_shared.max(sh);
        g.max_hdrm = g.max_hdrm.max(g.hdrm);
    }

    /// A packet of `size` bytes of group `idx` left (transmitted or dropped downstream): its
    /// bytes leave the headroom first, then the shared pool, then the reserve.
    pub fn on_departure(&mut self, idx: usize, size: u32) {
        let size = size as u64;
        let shared = self.shared(idx);
        let g = &mut self.groups[idx];
        let from_hdrm = g.hdrm.min(size);
        g.hdrm -= from_hdrm;
        let rest = (size - from_hdrm).min(g.ingress);
        g.ingress -= rest;
        self.shared_used -= rest.min(shared).min(self.shared_used);
    }

    /// Should a group that is not paused pause now? (`hdrm > 0` or `shared ≥ T`.)
    pub fn should_pause(&self, idx: usize) -> bool {
        self.groups[idx].hdrm > 0 || self.shared(idx) >= self.threshold_of(idx / self.classes)
    }

    /// Should a paused group resume now? (`hdrm = 0` and (`shared = 0` or
    /// `shared + offset ≤ T`).)
    pub fn should_resume(&self, idx: usize) -> bool {
        let sh = self.shared(idx);
        self.groups[idx].hdrm == 0
            && (sh == 0
                || sh + self.cfg.resume_offset_bytes <= self.threshold_of(idx / self.classes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEN_G: RateBps = RateBps(10_000_000_000);

    /// 2 inputs × 1 class, no reserve, 10 KB headroom each, buffer 120 KB: S = 100 KB.
    fn mmu(shift: i8, reserve: u64) -> IngressMmu {
        let cfg = DynamicConfig {
            buffer_bytes: 120_000 + 2 * reserve,
            alpha_shift: shift,
            alpha_per_rate: None,
            reserve_bytes: reserve,
            resume_offset_bytes: 3072,
            headroom: HeadroomRule::Bytes(10_000),
        };
        IngressMmu::new(cfg, 1, 1, &[TEN_G, TEN_G], &[]).unwrap()
    }

    #[test]
    fn threshold_falls_as_the_shared_pool_fills() {
        let mut m = mmu(0, 0); // alpha = 1
        assert_eq!(m.shared_pool(), 100_000);
        assert_eq!(m.threshold(), 100_000);
        // Input 1 takes 40 KB: the threshold of every input falls to 60 KB.
        for _ in 0..40 {
            m.on_arrival(1, 1000);
        }
        assert_eq!(m.shared_used(), 40_000);
        assert_eq!(m.threshold(), 60_000);
        let mut h = mmu(1, 0); // alpha = 1/2
        assert_eq!(h.threshold(), 50_000);
        h.on_arrival(1, 20_000);
        assert_eq!(h.threshold(), 40_000);
        let mut x = mmu(-1, 0); // alpha = 2
        x.on_arrival(0, 30_000);
        assert_eq!(x.threshold(), 140_000);
        // Departures raise it again.
        m.on_departure(1, 40_000);
        assert_eq!((m.shared_used(), m.threshold()), (0, 100_000));
    }

    #[test]
    fn pause_at_exactly_alpha_free_and_resume_at_threshold_minus_offset() {
        // alpha = 1/4, S = 100 KB. Alone, input 0 at q has T = (100000 - q)/4; q = T at
        // q = 20000.
        let mut m = mmu(2, 0);
        for _ in 0..19 {
            m.on_arrival(0, 1000);
            assert!(!m.should_pause(0));
        }
        assert_eq!((m.shared(0), m.threshold()), (19_000, 20_250));
        m.on_arrival(0, 1000);
        assert_eq!((m.shared(0), m.threshold()), (20_000, 20_000));
        assert!(m.should_pause(0)); // reached exactly alpha·free
                                    // Resume: shared + 3072 <= (100000 - shared)/4, i.e. shared <= 17542.4.
        m.on_departure(0, 2000); // 18000: 18000 + 3072 > 20500
        assert!(!m.should_resume(0));
        m.on_departure(0, 400); // 17600 + 3072 = 20672 > 20600
        assert!(!m.should_resume(0));
        m.on_departure(0, 100); // 17500 + 3072 = 20572 <= 20625
        assert!(m.should_resume(0));
        // Empty always resumes.
        m.on_departure(0, 17_500);
        assert!(m.should_resume(0));
    }

    #[test]
    fn headroom_absorbs_the_in_flight_bytes_then_drops() {
        let mut m = mmu(2, 0);
        m.on_arrival(0, 20_000); // at the threshold: paused
        assert!(m.should_pause(0));
        // What arrives after the pause exceeds T: it goes to the headroom (10 KB).
        for k in 1..=10 {
            assert_eq!(m.slot(0, 1000), Slot::Headroom, "{k}");
            m.on_arrival(0, 1000);
        }
        assert_eq!(m.group(0).hdrm, 10_000);
        assert_eq!(m.shared(0), 20_000);
        assert!(m.should_pause(0) && !m.should_resume(0));
        // Headroom full: the next packet is refused and counted.
        assert!(!m.admit(0, 1));
        assert_eq!(m.slot(0, 1000), Slot::Drop);
        m.on_arrival(0, 1000);
        assert_eq!((m.group(0).drops, m.group(0).drop_bytes), (1, 1000));
        assert_eq!(m.group(0).hdrm, 10_000);
        // The other input is unaffected (its own headroom and the shared pool).
        assert!(m.admit(1, 1000));
        // Departures drain the headroom first: no resume while it holds bytes.
        m.on_departure(0, 9_000);
        assert_eq!((m.group(0).hdrm, m.shared(0)), (1_000, 20_000));
        assert!(!m.should_resume(0));
        m.on_departure(0, 5_000);
        assert_eq!((m.group(0).hdrm, m.shared(0)), (0, 16_000));
        assert!(m.should_resume(0)); // 16000 + 3072 <= 21000
        assert_eq!(m.group(0).max_hdrm, 10_000);
        assert_eq!(m.group(0).max_shared, 20_000);
    }

    #[test]
    fn reserve_is_not_counted_against_the_pool() {
        let mut m = mmu(2, 4096);
        assert_eq!(m.shared_pool(), 100_000);
        m.on_arrival(0, 4096);
        assert_eq!((m.shared(0), m.shared_used()), (0, 0));
        assert!(!m.should_pause(0));
        // A packet straddling the reserve puts only its excess in the shared pool.
        m.on_arrival(0, 1000);
        assert_eq!((m.shared(0), m.shared_used()), (1000, 1000));
        // Leaving: the shared part goes first.
        m.on_departure(0, 1500);
        assert_eq!((m.group(0).ingress, m.shared_used()), (3596, 0));
        // A pool too small for the reserves and headrooms is refused.
        let cfg = DynamicConfig {
            buffer_bytes: 2 * (4096 + 10_000),
            reserve_bytes: 4096,
            headroom: HeadroomRule::Bytes(10_000),
            ..DynamicConfig::default()
        };
        assert!(IngressMmu::new(cfg, 1, 1, &[TEN_G, TEN_G], &[]).is_err());
        for shift in [-4i8, 11] {
            let c = DynamicConfig {
                alpha_shift: shift,
                ..DynamicConfig::default()
            };
            assert!(c.validate().is_err(), "{shift}");
        }
    }

    #[test]
    fn auto_headroom_arithmetic() {
        // 10 Gb/s, 3 us: 3750 B per cable delay; 2·3750 + 2·1500 + 84 + 30720/8 = 14424.
        assert_eq!(bytes_in_flight(TEN_G, SimTime::from_us(3)), 3750);
        assert_eq!(response_bits(TEN_G), 30_720);
        assert_eq!(auto_headroom(TEN_G, SimTime::from_us(3), 1500), 14_424);
        // 100 Gb/s, 1 us, 9000 B jumbo frames: 2·12500 + 18000 + 84 + 201728/8 = 68300.
        let hundred = RateBps(100_000_000_000);
        assert_eq!(response_bits(hundred), 201_728);
        assert_eq!(auto_headroom(hundred, SimTime::from_us(1), 9000), 68_300);
        // 1 Gb/s: 2 quanta; 25 Gb/s: 80 quanta; 40 Gb/s: 118; between rows: the row above.
        assert_eq!(response_bits(RateBps(1_000_000_000)), 1024);
        assert_eq!(response_bits(RateBps(25_000_000_000)), 40_960);
        assert_eq!(response_bits(RateBps(40_000_000_000)), 60_416);
        assert_eq!(response_bits(RateBps(20_000_000_000)), 40_960);
        assert_eq!(response_bits(RateBps(800_000_000_000)), 463_360);
        // Per input, from its own link.
        let cfg = DynamicConfig::default();
        let m = IngressMmu::new(
            cfg,
            8,
            8,
            &[TEN_G, hundred],
            &[SimTime::from_us(3), SimTime::from_us(1)],
        )
        .unwrap();
        assert_eq!(m.headroom_of(0), 14_424);
        assert_eq!(m.headroom_of(1), 2 * 12_500 + 3000 + 84 + 25_216);
        let fixed = 8 * (14_424 + 53_300) + 16 * 4096;
        assert_eq!(m.shared_pool(), DEFAULT_BUFFER_BYTES - fixed);
    }

    #[test]
    fn alpha_per_rate_halves_the_shift_per_doubling_down_to_one() {
        let g = |r: u64| RateBps(r * 1_000_000_000);
        let per = Some(g(100));
        // The HPCC simulator's rule: 1/8 at the NIC rate, 1/4 at 200, 1/2 at 400 Gb/s.
        assert_eq!(alpha_shift_for(3, per, g(100)), 3);
        assert_eq!(alpha_shift_for(3, per, g(25)), 3);
        assert_eq!(alpha_shift_for(3, per, g(200)), 2);
        assert_eq!(alpha_shift_for(3, per, g(400)), 1);
        // 250 Gb/s: halved to 125 (still above 100), then 62.5: two steps.
        assert_eq!(alpha_shift_for(3, per, g(250)), 1);
        // Never below 0 (alpha at most 1), and a negative shift is kept.
        assert_eq!(alpha_shift_for(3, per, g(1600)), 0);
        assert_eq!(alpha_shift_for(-1, per, g(400)), -1);
        assert_eq!(alpha_shift_for(3, None, g(400)), 3);
        // Per input: input 1 at 4x the reference rate has 4x the threshold of input 0.
        let cfg = DynamicConfig {
            buffer_bytes: 120_000,
            alpha_shift: 3,
            alpha_per_rate: Some(TEN_G),
            reserve_bytes: 0,
            resume_offset_bytes: 0,
            headroom: HeadroomRule::Bytes(10_000),
        };
        let mut m = IngressMmu::new(cfg, 1, 1, &[TEN_G, RateBps(4 * TEN_G.0)], &[]).unwrap();
        assert_eq!((m.threshold_of(0), m.threshold_of(1)), (12_500, 50_000));
        // Input 1's group pauses at its own threshold, not input 0's.
        m.on_arrival(1, 13_000);
        assert!(!m.should_pause(1));
        m.on_arrival(1, 27_000); // shared 40 000 >= (100 000 - 40 000) / 2 = 30 000
        assert!(m.should_pause(1));
        m.on_arrival(0, 7_000); // threshold of input 0: 53 000 / 8 = 6 625
        assert!(m.should_pause(0));
    }

    #[test]
    fn only_lossless_priorities_take_reserve_and_headroom_out_of_the_buffer() {
        let cfg = DynamicConfig {
            buffer_bytes: 1_000_000,
            reserve_bytes: 4096,
            headroom: HeadroomRule::Bytes(10_000),
            ..DynamicConfig::default()
        };
        let all = IngressMmu::new(cfg, 8, 8, &[TEN_G; 3], &[]).unwrap();
        assert_eq!(all.shared_pool(), 1_000_000 - 3 * 8 * (10_000 + 4096));
        let one = IngressMmu::new(cfg, 8, 1, &[TEN_G; 3], &[]).unwrap();
        assert_eq!(one.shared_pool(), 1_000_000 - 3 * (10_000 + 4096));
        assert_eq!(one.groups(), 24);
    }
}
