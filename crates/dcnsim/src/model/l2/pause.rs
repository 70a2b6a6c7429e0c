//! IEEE 802.3x PAUSE and IEEE 802.1Qbb priority-based flow control (PFC).
//!
//! Follows docs/models.md §2:
//! - frames (§2.1; IEEE 802.3 Annex 31B, 802.1Qbb): `pause_time` in quanta of 512 bit times
//!   of the link, at most 0xFFFF; a minimum-size MAC Control frame (64 B, 672 bit times on the
//!   wire with preamble, SFD and inter-frame gap); PFC carries one time per priority and each
//!   priority is paused independently;
//! - switch side ([`PauseWatermarks`], §2.2 after the Atikoglu/Prabhakar slides): per ingress
//!   port (PAUSE) or per ingress port × priority (PFC), the bytes buffered in the switch that
//!   arrived there; when the occupancy reaches the high watermark (130 KB) and the input is not
//!   yet paused, send PAUSE(max quanta); while paused, re-send it before it lapses (at half the
//!   pause duration, computed from the input link's rate); when the occupancy falls to the low
//!   watermark (110 KB), send PAUSE(0). The refresh rule and the use of max quanta are
//!   implementation choices (the slides give only the watermarks; NS3RDMA re-checks at half
//!   the pause time), docs/models.md §2.2 and §7 item 8;
//! - transmitter side ([`PauseState`], §2.1): after a PAUSE received at `t` no data frame (of
//!   that priority) may *start* before `t + quanta·512 bit times`; the frame in transmission
//!   is completed; a new frame replaces the timer; 0 resumes at once; MAC Control frames
//!   (PAUSE, and by the simulator's convention CNMs and other control frames) are never paused.
//!
//! With `PauseConfig::dynamic` the switch side decides by the dynamic threshold over a shared
//! buffer with reserve and headroom instead of the watermarks (`pfc_dynamic.rs`,
//! docs/models.md §2.5); the paused flags, frames and refreshes stay here.
//!
//! A PFC frame generated here carries one priority (the real frame has an enable vector and
//! eight times; coalescing several priorities into one frame is not modelled).

use crate::base::units::{RateBps, SimTime};
use crate::model::l2::pfc_dynamic::{DynamicConfig, IngressMmu};

/// Bits in one pause quantum (IEEE 802.3 Annex 31B).
pub const PAUSE_QUANTUM_BITS: u64 = 512;
/// Largest `pause_time` (16-bit field).
pub const MAX_PAUSE_QUANTA: u16 = 0xFFFF;
/// A PAUSE / PFC frame is a minimum-size Ethernet frame: 64 bytes (header, opcode, time(s),
/// padding and FCS).
pub const PAUSE_FRAME_BYTES: u32 = 64;
/// Bit times a PAUSE frame occupies on the wire: (64 + 8 preamble/SFD + 12 IFG) · 8 = 672.
pub const PAUSE_FRAME_WIRE_BITS: u64 = 672;
/// Number of 802.1Qbb priorities.
pub const PFC_PRIORITIES: usize = 8;

/// 802.1Qbb priority of a frame of traffic class `class` (`Packet::class`, the field the
/// multi-queue classifier uses): identity modulo 8, so classes 0..7 are priorities 0..7 and
/// class 8 shares priority 0. (802.1Q Table I-2 maps PCP to traffic classes; here the class
/// *is* the PCP, the usual RoCE set-up where DSCP/class and PFC priority coincide.)
#[inline]
pub fn class_priority(class: u8) -> u8 {
    class % PFC_PRIORITIES as u8
}

/// Duration of `quanta` pause quanta on a link of `rate`: `quanta·512 / rate`, rounded up to
/// the picosecond (`SimTime::NEVER` for a zero rate). 0xFFFF quanta last 3.355392 ms at
/// 10 Gb/s and 33.55392 ms at 1 Gb/s.
pub fn pause_duration(quanta: u16, rate: RateBps) -> SimTime {
    if rate.0 == 0 {
        return SimTime::NEVER;
    }
    let bits = quanta as u128 * PAUSE_QUANTUM_BITS as u128 * SimTime::PS_PER_S as u128;
    SimTime(bits.div_ceil(rate.0 as u128) as u64)
}

/// 802.3x (one class per link) or 802.1Qbb PFC (eight priorities).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseMode {
    /// IEEE 802.3x PAUSE: one counter per input; priorities are ignored; frames have
    /// `prio: None` and stop all data.
    Pause,
    /// IEEE 802.1Qbb PFC: one counter per input × priority (0..8); frames carry the priority.
    Pfc,
}

/// A PAUSE / PFC frame to send (switch side) or that was received (transmitter side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseFrame {
    /// Switch side: the input port whose link carries the frame back to the upstream
    /// transmitter. Informational on the receiver side.
    pub port: usize,
    /// `None`: 802.3x PAUSE (all traffic); `Some(p)`: PFC for priority `p`.
    pub prio: Option<u8>,
    /// Pause time in quanta of 512 bit times; 0 = resume.
    pub quanta: u16,
}

/// Switch-side parameters. `Default` is the slides' 802.3x set-up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PauseConfig {
    /// PAUSE or PFC. Default [`PauseMode::Pause`] (the slides use 802.3x).
    pub mode: PauseMode,
    /// High watermark in bytes: pause when the occupancy reaches it. Default 130000
    /// (slides: Watermark_hi = 130 KB).
    pub hi_bytes: u64,
    /// Low watermark in bytes: resume when the occupancy falls to it. Default 110000
    /// (slides: Watermark_lo = 110 KB).
    pub lo_bytes: u64,
    /// Quanta in each pause (and refresh) frame. Default 0xFFFF, the maximum (docs/models.md
    /// §2.2, implementation choice).
    pub quanta: u16,
    /// Refresh period as a fraction of the pause duration. Default 0.5 (re-send at half the
    /// pause time, as NS3RDMA re-checks; docs/models.md §2.2).
    pub refresh_fraction: f64,
    /// `None` (default): the fixed watermarks `hi_bytes` / `lo_bytes`. `Some`: the dynamic
    /// threshold over a shared buffer with reserve and headroom (`pfc_dynamic.rs`,
    /// docs/models.md §2.5); the watermarks are then not used.
    pub dynamic: Option<DynamicConfig>,
    /// Under PFC, the priorities it is enabled for (bit p: priority p is lossless), IEEE
    /// 802.1Qbb's per-priority enable (the PFC configuration's enable vector). Frames of
    /// the other priorities are neither counted nor paused, and take no reserve or headroom
    /// out of a dynamic threshold's buffer. Default 0xFF: every priority. Ignored by 802.3x.
    pub enabled: u8,
}

impl Default for PauseConfig {
    fn default() -> Self {
        PauseConfig {
            mode: PauseMode::Pause,
            hi_bytes: 130_000,
            lo_bytes: 110_000,
            quanta: MAX_PAUSE_QUANTA,
            refresh_fraction: 0.5,
            dynamic: None,
            enabled: 0xFF,
        }
    }
}

impl PauseConfig {
    /// Check the parameters; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if self.hi_bytes == 0 {
            return Err("pause: the high watermark must be positive".into());
        }
        if self.lo_bytes >= self.hi_bytes {
            return Err(format!(
                "pause: the low watermark ({} B) must be below the high watermark ({} B)",
                self.lo_bytes, self.hi_bytes
            ));
        }
        if self.quanta == 0 {
            return Err("pause: pause quanta must be at least 1".into());
        }
        if !self.refresh_fraction.is_finite()
            || self.refresh_fraction <= 0.0
            || self.refresh_fraction > 1.0
        {
            return Err(format!(
                "pause: refresh fraction must be in (0, 1], got {}",
                self.refresh_fraction
            ));
        }
        if let Some(d) = &self.dynamic {
            d.validate()?;
        }
        if self.mode == PauseMode::Pfc && self.enabled == 0 {
            return Err("pause: PFC must be enabled for at least one priority".into());
        }
        Ok(())
    }
}

/// Counters of the switch side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PauseStats {
    /// PAUSE(quanta > 0) frames sent on reaching the high watermark.
    pub pauses: u64,
    /// Refresh frames sent while paused.
    pub refreshes: u64,
    /// PAUSE(0) frames sent on falling to the low watermark.
    pub resumes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Class {
    occ: u64,
    paused: bool,
    refresh_at: SimTime,
    /// PAUSE(quanta > 0) frames this input (× priority) triggered (refreshes excluded).
    pauses: u64,
}

/// Switch-side watermark accounting and PAUSE / PFC generation for all inputs of a switch.
/// Storage is allocated once in [`PauseWatermarks::new`]; the per-packet calls do not allocate.
#[derive(Clone, Debug)]
pub struct PauseWatermarks {
    cfg: PauseConfig,
    classes_per_input: usize,
    /// Refresh period per input (from its link rate).
    refresh: Vec<SimTime>,
    st: Vec<Class>,
    /// The dynamic-threshold accounting (`PauseConfig::dynamic`).
    mmu: Option<IngressMmu>,
    /// Counters.
    pub stats: PauseStats,
}

impl PauseWatermarks {
    /// Accounting for `input_rates.len()` inputs; `input_rates[i]` is the rate of input `i`'s
    /// link, which sets the pause duration and refresh period of the frames sent on it.
    /// With the dynamic threshold an automatic headroom is sized here for zero cable delay;
    /// [`PauseWatermarks::with_delays`] gives the links' delays.
    pub fn new(cfg: PauseConfig, input_rates: &[RateBps]) -> Result<PauseWatermarks, String> {
        PauseWatermarks::with_delays(cfg, input_rates, &[])
    }

    /// [`PauseWatermarks::new`] with the one-way delay of each input's link (used by the
    /// dynamic threshold's automatic headroom; missing entries are 0).
    pub fn with_delays(
        cfg: PauseConfig,
        input_rates: &[RateBps],
        input_delays: &[SimTime],
    ) -> Result<PauseWatermarks, String> {
        cfg.validate()?;
        if input_rates.is_empty() {
            return Err("pause: a switch needs at least one input".into());
        }
        let mut refresh = Vec::with_capacity(input_rates.len());
        for (i, r) in input_rates.iter().enumerate() {
            if r.0 == 0 {
                return Err(format!("pause: input {i} has a zero link rate"));
            }
            let d = pause_duration(cfg.quanta, *r).0 as f64 * cfg.refresh_fraction;
            refresh.push(SimTime((d.floor() as u64).max(1)));
        }
        let classes_per_input = match cfg.mode {
            PauseMode::Pause => 1,
            PauseMode::Pfc => PFC_PRIORITIES,
        };
        let st = vec![
            Class {
                occ: 0,
                paused: false,
                refresh_at: SimTime::NEVER,
                pauses: 0,
            };
            input_rates.len() * classes_per_input
        ];
        let mmu = match cfg.dynamic {
            Some(d) => Some(IngressMmu::new(
                d,
                classes_per_input,
                match cfg.mode {
                    PauseMode::Pause => 1,
                    PauseMode::Pfc => cfg.enabled.count_ones() as usize,
                },
                input_rates,
                input_delays,
            )?),
            None => None,
        };
        Ok(PauseWatermarks {
            cfg,
            classes_per_input,
            refresh,
            st,
            mmu,
            stats: PauseStats::default(),
        })
    }

    pub fn config(&self) -> &PauseConfig {
        &self.cfg
    }

    pub fn inputs(&self) -> usize {
        self.refresh.len()
    }

    /// Refresh period of the frames sent on `input` (`fraction × quanta·512 bit times`).
    pub fn refresh_period(&self, input: usize) -> Option<SimTime> {
        self.refresh.get(input).copied()
    }

    fn index(&self, input: usize, prio: u8) -> Option<usize> {
        if input >= self.refresh.len() {
            return None;
        }
        let c = match self.cfg.mode {
            PauseMode::Pause => 0,
            PauseMode::Pfc
                if (prio as usize) < PFC_PRIORITIES && self.cfg.enabled >> prio & 1 != 0 =>
            {
                prio as usize
            }
            PauseMode::Pfc => return None,
        };
        Some(input * self.classes_per_input + c)
    }

    fn frame(&self, idx: usize, quanta: u16) -> PauseFrame {
        let port = idx / self.classes_per_input;
        let prio = match self.cfg.mode {
            PauseMode::Pause => None,
            PauseMode::Pfc => Some((idx % self.classes_per_input) as u8),
        };
        PauseFrame { port, prio, quanta }
    }

    /// Bytes buffered that arrived on `input` (with priority `prio` under PFC; `prio` is
    /// ignored for 802.3x). 0 for an unknown input or priority.
    pub fn occupancy(&self, input: usize, prio: u8) -> u64 {
        self.index(input, prio).map_or(0, |i| self.st[i].occ)
    }

    /// Whether `input` (× `prio` under PFC) is currently paused.
    pub fn is_paused(&self, input: usize, prio: u8) -> bool {
        self.index(input, prio).is_some_and(|i| self.st[i].paused)
    }

    /// When the pause of `input` (× `prio`) must be refreshed (`NEVER` when not paused).
    pub fn refresh_deadline(&self, input: usize, prio: u8) -> SimTime {
        self.index(input, prio)
            .map_or(SimTime::NEVER, |i| self.st[i].refresh_at)
    }

    /// Earliest refresh deadline over all inputs and priorities (`NEVER` if none is paused):
    /// the time of the one pending event the caller holds. Linear in inputs × classes; call it
    /// after a call that returned a frame, not per packet.
    pub fn next_refresh(&self) -> SimTime {
        self.st
            .iter()
            .map(|c| c.refresh_at)
            .min()
            .unwrap_or(SimTime::NEVER)
    }

    /// The refresh event fired at `now`: returns one due refresh frame (PAUSE(quanta) again)
    /// and moves its deadline one refresh period on; call repeatedly until `None`.
    pub fn poll_refresh(&mut self, now: SimTime) -> Option<PauseFrame> {
        let idx = self.st.iter().position(|c| c.refresh_at <= now)?;
        let input = idx / self.classes_per_input;
        self.st[idx].refresh_at = now + self.refresh[input];
        self.stats.refreshes += 1;
        Some(self.frame(idx, self.cfg.quanta))
    }

    /// Classes per input: 8 under PFC, 1 under 802.3x.
    pub fn classes_per_input(&self) -> usize {
        self.classes_per_input
    }

    /// The dynamic-threshold accounting, if configured.
    pub fn mmu(&self) -> Option<&IngressMmu> {
        self.mmu.as_ref()
    }

    /// PAUSE(quanta > 0) frames triggered by `input` (× `prio`), refreshes excluded.
    pub fn pauses(&self, input: usize, prio: u8) -> u64 {
        self.index(input, prio).map_or(0, |i| self.st[i].pauses)
    }

    /// May a packet of `bytes` arriving on `input` with priority `prio` be buffered? Always
    /// with the fixed watermarks; with the dynamic threshold, when the shared pool or the
    /// headroom has room (`IngressMmu::admit`). Unknown inputs or priorities are admitted.
    #[inline]
    pub fn admit(&self, input: usize, prio: u8, bytes: u32) -> bool {
        match (&self.mmu, self.index(input, prio)) {
            (Some(m), Some(idx)) => m.admit(idx, bytes),
            _ => true,
        }
    }

    /// A packet that [`PauseWatermarks::admit`] refused (counted by the dynamic accounting).
    pub fn on_drop(&mut self, input: usize, prio: u8, bytes: u32) {
        if let (Some(idx), Some(m)) = (self.index(input, prio), self.mmu.as_mut()) {
            m.on_drop(idx, bytes);
        }
    }

    /// A packet of `bytes` arrived on `input` with priority `prio` and is buffered. Returns
    /// the PAUSE to send on `input`'s link when the occupancy reaches the high watermark (with
    /// the dynamic threshold: `IngressMmu::should_pause`) and the input (× priority) is not
    /// yet paused. Unknown inputs or priorities are ignored.
    pub fn on_arrival(
        &mut self,
        now: SimTime,
        input: usize,
        prio: u8,
        bytes: u32,
    ) -> Option<PauseFrame> {
        let idx = self.index(input, prio)?;
        let hi = self.cfg.hi_bytes;
        let reached = match self.mmu.as_mut() {
            Some(m) => {
                m.on_arrival(idx, bytes);
                self.st[idx].occ += bytes as u64;
                m.should_pause(idx)
            }
            None => {
                let c = &mut self.st[idx];
                c.occ += bytes as u64;
                c.occ >= hi
            }
        };
        let c = &mut self.st[idx];
        if reached && !c.paused {
            c.paused = true;
            c.pauses += 1;
            c.refresh_at = now + self.refresh[input];
            self.stats.pauses += 1;
            return Some(self.frame(idx, self.cfg.quanta));
        }
        None
    }

    /// A buffered packet of `bytes` that had arrived on `input` with priority `prio` left the
    /// switch (or was dropped). Returns PAUSE(0) when a paused input (× priority) falls to the
    /// low watermark (with the dynamic threshold: `IngressMmu::should_resume`). The occupancy saturates at 0 if more bytes leave than arrived.
    pub fn on_departure(
        &mut self,
        _now: SimTime,
        input: usize,
        prio: u8,
        bytes: u32,
    ) -> Option<PauseFrame> {
        let idx = self.index(input, prio)?;
        let lo = self.cfg.lo_bytes;
        let c = &mut self.st[idx];
        c.occ = c.occ.saturating_sub(bytes as u64);
        let below = match self.mmu.as_mut() {
            Some(m) => {
                m.on_departure(idx, bytes);
                m.should_resume(idx)
            }
            None => c.occ <= lo,
        };
        let c = &mut self.st[idx];
        if c.paused && below {
            c.paused = false;
            c.refresh_at = SimTime::NEVER;
            self.stats.resumes += 1;
            return Some(self.frame(idx, 0));
        }
        None
    }
}

/// Transmitter-side pause timer of one port: per priority (PFC) or one for the link
/// (802.3x). Also accumulates the paused time.
#[derive(Clone, Debug)]
pub struct PauseState {
    mode: PauseMode,
    until: [SimTime; PFC_PRIORITIES],
    since: [SimTime; PFC_PRIORITIES],
    acc: [u64; PFC_PRIORITIES],
    /// Frames applied.
    pub frames: u64,
}

impl PauseState {
    /// A port that is not paused. In [`PauseMode::Pause`] only class 0 is used and the `prio`
    /// arguments below are ignored.
    pub fn new(mode: PauseMode) -> PauseState {
        PauseState {
            mode,
            until: [SimTime::ZERO; PFC_PRIORITIES],
            since: [SimTime::ZERO; PFC_PRIORITIES],
            acc: [0; PFC_PRIORITIES],
            frames: 0,
        }
    }

    pub fn mode(&self) -> PauseMode {
        self.mode
    }

    fn class(&self, prio: u8) -> usize {
        match self.mode {
            PauseMode::Pause => 0,
            PauseMode::Pfc => (prio as usize).min(PFC_PRIORITIES - 1),
        }
    }

    fn set(&mut self, c: usize, now: SimTime, until: SimTime) {
        let end = self.until[c].min(now);
        if end > self.since[c] {
            self.acc[c] += end.0 - self.since[c].0;
        }
        self.since[c] = now;
        self.until[c] = until;
    }

    /// A PAUSE / PFC frame was received at `now` on a link of `rate`. Replaces the running
    /// timer of the class(es) it addresses: until `now + quanta·512 bit times`, or `now`
    /// (resume) for 0. An 802.3x frame (`prio: None`) on a PFC port pauses every priority; a
    /// PFC frame on an 802.3x port, or one with a priority >= 8, is ignored (returns false).
    pub fn on_frame(&mut self, now: SimTime, frame: &PauseFrame, rate: RateBps) -> bool {
        let until = if frame.quanta == 0 {
            now
        } else {
            now + pause_duration(frame.quanta, rate)
        };
        match (self.mode, frame.prio) {
            (PauseMode::Pause, None) => self.set(0, now, until),
            (PauseMode::Pause, Some(_)) => return false,
            (PauseMode::Pfc, None) => {
                for c in 0..PFC_PRIORITIES {
                    self.set(c, now, until);
                }
            }
            (PauseMode::Pfc, Some(p)) if (p as usize) < PFC_PRIORITIES => {
                self.set(p as usize, now, until)
            }
            (PauseMode::Pfc, Some(_)) => return false,
        }
        self.frames += 1;
        true
    }

    /// Time before which no data frame of priority `prio` may start (<= now: not paused). The
    /// caller resumes transmission with an event at this time if it is in the future.
    pub fn paused_until(&self, prio: u8) -> SimTime {
        self.until[self.class(prio)]
    }

    /// Whether a data frame of priority `prio` may start at `now`.
    pub fn may_start(&self, now: SimTime, prio: u8) -> bool {
        now >= self.paused_until(prio)
    }

    /// Control frames (PAUSE, PFC, CNM) are never paused.
    pub fn may_start_control(&self, _now: SimTime) -> bool {
        true
    }

    /// Priorities paused at `now` (bit p = priority p; every bit under 802.3x PAUSE).
    pub fn paused_mask(&self, now: SimTime) -> u8 {
        match self.mode {
            PauseMode::Pause if self.until[0] > now => 0xFF,
            PauseMode::Pause => 0,
            PauseMode::Pfc => (0..PFC_PRIORITIES)
                .filter(|&c| self.until[c] > now)
                .fold(0u8, |m, c| m | (1 << c)),
        }
    }

    /// The latest pause end over all priorities (the time after which nothing is paused).
    pub fn latest_until(&self) -> SimTime {
        match self.mode {
            PauseMode::Pause => self.until[0],
            PauseMode::Pfc => self.until.iter().copied().max().unwrap_or(SimTime::ZERO),
        }
    }

    /// Paused time up to `now` summed over the priorities (priority-seconds under PFC; the
    /// link's paused time under 802.3x).
    pub fn paused_time_total(&self, now: SimTime) -> SimTime {
        match self.mode {
            PauseMode::Pause => self.paused_time(now, 0),
            PauseMode::Pfc => SimTime(
                (0..PFC_PRIORITIES as u8)
                    .map(|p| self.paused_time(now, p).0)
                    .sum(),
            ),
        }
    }

    /// Total time priority `prio` has been paused up to `now`.
    pub fn paused_time(&self, now: SimTime, prio: u8) -> SimTime {
        let c = self.class(prio);
        let end = self.until[c].min(now);
        let open = end.0.saturating_sub(self.since[c].0);
        SimTime(self.acc[c] + open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEN_G: RateBps = RateBps(10_000_000_000);
    const ONE_G: RateBps = RateBps(1_000_000_000);

    fn us(x: u64) -> SimTime {
        SimTime::from_us(x)
    }

    #[test]
    fn frame_constants_and_durations() {
        assert_eq!(
            PAUSE_FRAME_WIRE_BITS,
            (PAUSE_FRAME_BYTES as u64 + 8 + 12) * 8
        );
        assert_eq!(
            PAUSE_FRAME_WIRE_BITS,
            crate::model::l2::pfc_dynamic::PAUSE_FRAME_WIRE_BYTES * 8
        );
        assert_eq!(
            crate::model::l2::pfc_dynamic::response_bits(TEN_G),
            60 * PAUSE_QUANTUM_BITS
        );
        // 672 bit times at 10 Gb/s = 67.2 ns.
        assert_eq!(TEN_G.tx_time(84), SimTime(67_200));
        // One quantum: 512 bit at 10 Gb/s = 51.2 ns; at 1 Gb/s 512 ns.
        assert_eq!(pause_duration(1, TEN_G), SimTime(51_200));
        assert_eq!(pause_duration(1, ONE_G), SimTime(512_000));
        // Max quanta: 65535·51.2 ns = 3.355392 ms; 65535·512 ns = 33.55392 ms.
        assert_eq!(pause_duration(0xFFFF, TEN_G), SimTime(3_355_392_000));
        assert_eq!(pause_duration(0xFFFF, ONE_G), SimTime(33_553_920_000));
        assert_eq!(pause_duration(0, TEN_G), SimTime(0));
        assert_eq!(pause_duration(1, RateBps(0)), SimTime::NEVER);
        // 3 quanta at 3 Gb/s: 1536 bit / 3e9 = 512 ns exactly; at 7 Gb/s round up:
        // 1536e12/7e9 = 219428.57 -> 219429 ps.
        assert_eq!(pause_duration(3, RateBps(3_000_000_000)), SimTime(512_000));
        assert_eq!(pause_duration(3, RateBps(7_000_000_000)), SimTime(219_429));
    }

    #[test]
    fn bad_configs_are_errors() {
        let r = [TEN_G];
        for c in [
            PauseConfig {
                hi_bytes: 0,
                lo_bytes: 0,
                ..PauseConfig::default()
            },
            PauseConfig {
                lo_bytes: 130_000,
                ..PauseConfig::default()
            },
            PauseConfig {
                quanta: 0,
                ..PauseConfig::default()
            },
            PauseConfig {
                refresh_fraction: 0.0,
                ..PauseConfig::default()
            },
            PauseConfig {
                refresh_fraction: f64::NAN,
                ..PauseConfig::default()
            },
        ] {
            assert!(PauseWatermarks::new(c, &r).is_err(), "{c:?}");
        }
        assert!(PauseWatermarks::new(PauseConfig::default(), &[]).is_err());
        assert!(PauseWatermarks::new(PauseConfig::default(), &[TEN_G, RateBps(0)]).is_err());
    }

    #[test]
    fn pfc_counts_and_pauses_only_its_enabled_priorities() {
        let cfg = PauseConfig {
            mode: PauseMode::Pfc,
            enabled: 1 << 3,
            ..PauseConfig::default()
        };
        let mut w = PauseWatermarks::new(cfg, &[TEN_G]).unwrap();
        // Priority 0 is lossy: 200 KB arrive, nothing is counted, no PAUSE.
        for _ in 0..200 {
            assert_eq!(w.on_arrival(SimTime::ZERO, 0, 0, 1000), None);
        }
        assert_eq!((w.occupancy(0, 0), w.pauses(0, 0)), (0, 0));
        // Priority 3 pauses at the high watermark, as with PFC on every priority.
        let mut f = None;
        for _ in 0..130 {
            f = f.or(w.on_arrival(SimTime::ZERO, 0, 3, 1000));
        }
        assert_eq!(f.map(|f| f.prio), Some(Some(3)));
        assert!(w.is_paused(0, 3) && !w.is_paused(0, 0));
        let none = PauseConfig {
            mode: PauseMode::Pfc,
            enabled: 0,
            ..PauseConfig::default()
        };
        assert!(PauseWatermarks::new(none, &[TEN_G]).is_err());
    }

    #[test]
    fn pause_at_hi_resume_at_lo() {
        let mut w = PauseWatermarks::new(PauseConfig::default(), &[TEN_G, TEN_G]).unwrap();
        // 86 x 1500 = 129000 < 130000: nothing; the 87th (130500 >= 130000) pauses input 0.
        for k in 1..=86 {
            assert_eq!(w.on_arrival(us(k), 0, 0, 1500), None);
        }
        assert_eq!(w.occupancy(0, 0), 129_000);
        let f = w.on_arrival(us(87), 0, 0, 1500);
        assert_eq!(
            f,
            Some(PauseFrame {
                port: 0,
                prio: None,
                quanta: 0xFFFF
            })
        );
        assert!(w.is_paused(0, 0));
        assert!(!w.is_paused(1, 0));
        // Already paused: no new frame while above HI.
        for k in 88..=90 {
            assert_eq!(w.on_arrival(us(k), 0, 0, 1500), None);
        }
        assert_eq!(w.occupancy(0, 0), 135_000);
        // Departures: 135000 - 16·1500 = 111000 > LO; the 17th leaves 109500 <= 110000.
        for k in 1..=16 {
            assert_eq!(w.on_departure(us(100 + k), 0, 0, 1500), None);
        }
        assert_eq!(
            w.on_departure(us(117), 0, 0, 1500),
            Some(PauseFrame {
                port: 0,
                prio: None,
                quanta: 0
            })
        );
        assert!(!w.is_paused(0, 0));
        assert_eq!(w.refresh_deadline(0, 0), SimTime::NEVER);
        // Below HI again after resume: pauses again only when HI is reached.
        assert_eq!(w.on_arrival(us(200), 0, 0, 20_000), None); // 129500
        assert!(w.on_arrival(us(201), 0, 0, 500).is_some()); // exactly 130000 = HI
                                                             // Falling to exactly LO resumes.
        assert!(w.on_departure(us(202), 0, 0, 20_000).is_some()); // 110000 = LO
        assert_eq!(
            w.stats,
            PauseStats {
                pauses: 2,
                refreshes: 0,
                resumes: 2
            }
        );
        // Input 1 untouched; unknown input ignored.
        assert_eq!(w.occupancy(1, 0), 0);
        assert_eq!(w.on_arrival(us(1), 5, 0, 200_000), None);
        // Underflow saturates.
        assert_eq!(w.on_departure(us(300), 1, 0, 1500), None);
        assert_eq!(w.occupancy(1, 0), 0);
    }

    #[test]
    fn refresh_at_half_the_pause_time() {
        let mut w = PauseWatermarks::new(PauseConfig::default(), &[TEN_G, ONE_G]).unwrap();
        // Half of 3355392000 ps at 10 Gb/s; half of 33553920000 ps at 1 Gb/s.
        assert_eq!(w.refresh_period(0), Some(SimTime(1_677_696_000)));
        assert_eq!(w.refresh_period(1), Some(SimTime(16_776_960_000)));
        assert_eq!(w.next_refresh(), SimTime::NEVER);
        let t0 = us(1);
        assert!(w.on_arrival(t0, 0, 0, 130_000).is_some());
        let t1 = us(2);
        assert!(w.on_arrival(t1, 1, 0, 140_000).is_some());
        let r0 = t0 + SimTime(1_677_696_000);
        let r1 = t1 + SimTime(16_776_960_000);
        assert_eq!(w.refresh_deadline(0, 0), r0);
        assert_eq!(w.refresh_deadline(1, 0), r1);
        assert_eq!(w.next_refresh(), r0);
        // Not yet due.
        assert_eq!(w.poll_refresh(r0 - SimTime(1)), None);
        // Due: re-send PAUSE(max) on input 0; the next refresh is one period later.
        assert_eq!(
            w.poll_refresh(r0),
            Some(PauseFrame {
                port: 0,
                prio: None,
                quanta: 0xFFFF
            })
        );
        assert_eq!(w.poll_refresh(r0), None);
        let r0b = r0 + SimTime(1_677_696_000);
        assert_eq!(w.refresh_deadline(0, 0), r0b);
        // The refresh keeps the upstream paused: the receiver's timer never lapses.
        assert!(r0b < r0 + pause_duration(0xFFFF, TEN_G));
        // Several due at once come out one by one.
        let late = r1 + SimTime(1);
        let a = w.poll_refresh(late).unwrap();
        let b = w.poll_refresh(late).unwrap();
        assert_eq!((a.port, b.port), (0, 1));
        assert_eq!(w.poll_refresh(late), None);
        assert_eq!(w.stats.refreshes, 3);
        // Resume stops refreshing input 0.
        assert!(w.on_departure(late, 0, 0, 30_000).is_some());
        assert_eq!(w.next_refresh(), late + SimTime(16_776_960_000));
    }

    #[test]
    fn pfc_priorities_are_independent() {
        let cfg = PauseConfig {
            mode: PauseMode::Pfc,
            ..PauseConfig::default()
        };
        let mut w = PauseWatermarks::new(cfg, &[TEN_G]).unwrap();
        assert_eq!(w.on_arrival(us(1), 0, 3, 100_000), None);
        assert_eq!(w.on_arrival(us(1), 0, 5, 100_000), None);
        // Priority 3 reaches HI; priority 5 (100000) does not.
        assert_eq!(
            w.on_arrival(us(2), 0, 3, 30_000),
            Some(PauseFrame {
                port: 0,
                prio: Some(3),
                quanta: 0xFFFF
            })
        );
        assert!(w.is_paused(0, 3));
        assert!(!w.is_paused(0, 5));
        assert_eq!(w.occupancy(0, 5), 100_000);
        assert_eq!(w.refresh_deadline(0, 5), SimTime::NEVER);
        // Departures of priority 5 do not resume priority 3.
        assert_eq!(w.on_departure(us(3), 0, 5, 100_000), None);
        assert!(w.is_paused(0, 3));
        assert_eq!(
            w.on_departure(us(4), 0, 3, 20_000),
            Some(PauseFrame {
                port: 0,
                prio: Some(3),
                quanta: 0
            })
        );
        // Priority out of range is ignored.
        assert_eq!(w.on_arrival(us(5), 0, 8, 200_000), None);
        // 802.3x: one counter per input, priorities share it: 65000 + 65000 = HI.
        let mut p = PauseWatermarks::new(PauseConfig::default(), &[TEN_G]).unwrap();
        assert_eq!(p.on_arrival(us(1), 0, 3, 65_000), None);
        assert_eq!(
            p.on_arrival(us(1), 0, 5, 65_000).map(|f| f.prio),
            Some(None)
        );
    }

    #[test]
    fn receiver_timer_replace_and_resume() {
        let mut s = PauseState::new(PauseMode::Pause);
        assert!(s.may_start(SimTime::ZERO, 0));
        let f = |quanta| PauseFrame {
            port: 0,
            prio: None,
            quanta,
        };
        // PAUSE(max) at 1 us on 10 Gb/s: no data before 1 us + 3.355392 ms.
        assert!(s.on_frame(us(1), &f(0xFFFF), TEN_G));
        assert_eq!(s.paused_until(0), us(1) + SimTime(3_355_392_000));
        assert!(!s.may_start(us(1000), 0));
        assert!(s.may_start_control(us(1000)));
        // Priorities are irrelevant for 802.3x.
        assert!(!s.may_start(us(1000), 6));
        // A new frame replaces the timer (here shortening it): 100 quanta = 5.12 us.
        assert!(s.on_frame(us(2), &f(100), TEN_G));
        assert_eq!(s.paused_until(0), us(2) + SimTime(5_120_000));
        assert!(!s.may_start(SimTime(7_119_999), 0));
        assert!(s.may_start(SimTime(7_120_000), 0));
        // ... or extending it.
        assert!(s.on_frame(us(3), &f(1000), TEN_G));
        assert_eq!(s.paused_until(0), us(3) + us(51) + SimTime(200_000));
        // PAUSE(0) resumes at once.
        assert!(s.on_frame(us(4), &f(0), TEN_G));
        assert_eq!(s.paused_until(0), us(4));
        assert!(s.may_start(us(4), 0));
        // Paused from 1 to 4 us in total.
        assert_eq!(s.paused_time(us(10), 0), us(3));
        // A pause that lapses on its own counts only up to its end: 1 quantum at 1 Gb/s.
        assert!(s.on_frame(us(20), &f(1), ONE_G));
        assert_eq!(s.paused_time(us(20), 0), us(3));
        assert_eq!(s.paused_time(SimTime(20_256_000), 0), SimTime(3_256_000));
        assert_eq!(s.paused_time(us(30), 0), SimTime(3_512_000));
        assert!(s.on_frame(us(40), &f(0), ONE_G));
        assert_eq!(s.paused_time(us(50), 0), SimTime(3_512_000));
        // A PFC frame on an 802.3x port is ignored.
        assert!(!s.on_frame(
            us(60),
            &PauseFrame {
                port: 0,
                prio: Some(1),
                quanta: 10
            },
            TEN_G
        ));
        assert!(s.may_start(us(60), 0));
        assert_eq!(s.frames, 6);
    }

    #[test]
    fn receiver_pfc_per_priority() {
        let mut s = PauseState::new(PauseMode::Pfc);
        let pfc = |p, quanta| PauseFrame {
            port: 0,
            prio: Some(p),
            quanta,
        };
        assert!(s.on_frame(us(1), &pfc(3, 0xFFFF), TEN_G));
        assert!(!s.may_start(us(2), 3));
        assert!(s.may_start(us(2), 5));
        assert!(s.may_start_control(us(2)));
        assert!(s.on_frame(us(2), &pfc(5, 10), TEN_G)); // 512 ns
        assert_eq!(s.paused_until(5), us(2) + SimTime(512_000));
        // Resuming 3 leaves 5 paused.
        assert!(s.on_frame(us(2), &pfc(3, 0), TEN_G));
        assert!(s.may_start(us(2), 3));
        assert!(!s.may_start(us(2), 5));
        assert_eq!(s.paused_time(us(5), 3), us(1));
        assert_eq!(s.paused_time(us(5), 5), SimTime(512_000));
        // An 802.3x PAUSE on a PFC port stops every priority.
        let all = PauseFrame {
            port: 0,
            prio: None,
            quanta: 20,
        };
        assert!(s.on_frame(us(10), &all, TEN_G));
        for p in 0..8 {
            assert_eq!(s.paused_until(p), us(11) + SimTime(24_000));
        }
        // Priority >= 8 ignored.
        assert!(!s.on_frame(us(20), &pfc(8, 5), TEN_G));
    }

    #[test]
    fn masks_and_totals() {
        assert_eq!(class_priority(3), 3);
        assert_eq!(class_priority(8), 0);
        assert_eq!(class_priority(255), 7);
        let mut s = PauseState::new(PauseMode::Pfc);
        let pfc = |p, quanta| PauseFrame {
            port: 0,
            prio: Some(p),
            quanta,
        };
        assert_eq!(s.paused_mask(us(0)), 0);
        assert!(s.on_frame(us(1), &pfc(1, 100), TEN_G)); // until 1 + 5.12 us
        assert!(s.on_frame(us(2), &pfc(6, 10), TEN_G)); // until 2 + 0.512 us
        assert_eq!(s.paused_mask(us(2)), 0b0100_0010);
        assert_eq!(s.paused_mask(SimTime(2_512_000)), 0b0000_0010);
        assert_eq!(s.paused_mask(SimTime(6_120_000)), 0);
        assert_eq!(s.latest_until(), SimTime(6_120_000));
        assert_eq!(s.paused_time_total(us(10)), SimTime(5_120_000 + 512_000));
        let mut x = PauseState::new(PauseMode::Pause);
        let all = PauseFrame {
            port: 0,
            prio: None,
            quanta: 100,
        };
        assert!(x.on_frame(us(1), &all, TEN_G));
        assert_eq!(x.paused_mask(us(1)), 0xFF);
        assert_eq!(x.paused_time_total(us(10)), SimTime(5_120_000));
        assert_eq!(x.latest_until(), SimTime(6_120_000));
    }
}
