//! The RTT estimator and retransmission timeout: RFC 6298 in exact time, or ns-2's
//! tick-based estimator (`rtt_tick`), with exponential backoff.

use super::TcpFlow;
use crate::base::units::SimTime;

impl TcpFlow {
    /// One RTT sample: a segment sent at `sent` is acknowledged at `now`.
    pub(super) fn rtt_sample(&mut self, sent: SimTime, now: SimTime) {
        self.rack_on_rtt(now - sent);
        if self.cfg.rtt_tick.0 > 0 {
            self.tick_rtt_sample(sent, now);
            return;
        }
        let r = now - sent;
        let s = &mut self.snd;
        if !s.have_rtt {
            s.srtt = r;
            s.rttvar = SimTime(r.0 / 2);
            s.have_rtt = true;
        } else {
            let diff = s.srtt.0.abs_diff(r.0);
            s.rttvar = SimTime((3 * s.rttvar.0 + diff) / 4);
            s.srtt = SimTime((7 * s.srtt.0 + r.0) / 8);
        }
        self.snd.rto = self.compute_rto();
    }

    /// ns-2's estimator (`TcpAgent::rtt_update`): the sample is the number of tick
    /// boundaries of this connection's clock crossed between send and ACK (at least 1;
    /// with timestamps the RTT rounded to ticks); 8·SRTT and 4·RTTVAR are integers in ticks
    /// updated with gains 1/8 and 1/4; RTO (`t_rtxcur_`) = SRTT + 4·RTTVAR ticks. A sample
    /// ends the backoff (`t_backoff_ = 1` in `newack`).
    pub(super) fn tick_rtt_sample(&mut self, sent: SimTime, now: SimTime) {
        let tick = self.cfg.rtt_tick.0;
        let tao = now.0 - sent.0;
        let m = if self.cfg.timestamps {
            (tao + tick / 2) / tick
        } else {
            (tao + (sent.0 + self.snd.tick_phase.0) % tick) / tick
        }
        .max(1) as i64;
        let s = &mut self.snd;
        if s.tick_srtt != 0 {
            let delta = m - (s.tick_srtt >> 3);
            s.tick_srtt = (s.tick_srtt + delta).max(1);
            let dev = delta.abs() - (s.tick_rttvar >> 2);
            s.tick_rttvar = (s.tick_rttvar + dev).max(1);
        } else {
            s.tick_srtt = m << 3;
            s.tick_rttvar = m << 1;
        }
        s.have_rtt = true;
        s.backoff = 1;
        s.srtt = SimTime(s.tick_srtt as u64 * tick / 8);
        s.rttvar = SimTime(s.tick_rttvar as u64 * tick / 4);
        s.tick_rtxcur = SimTime((((s.tick_rttvar << 3) + s.tick_srtt) >> 3) as u64 * tick);
        self.snd.rto = self.tick_rto();
    }

    /// ns-2 `rtt_timeout` with `rfc2988_ true`: max(t_rtxcur_, min_rto) × backoff, at most
    /// `max_rto`, at least 2 ticks.
    pub(super) fn tick_rto(&self) -> SimTime {
        let base = self.snd.tick_rtxcur.max(self.cfg.min_rto);
        let t = SimTime(base.0.saturating_mul(self.snd.backoff as u64)).min(self.cfg.max_rto);
        t.max(SimTime(2 * self.cfg.rtt_tick.0))
    }

    /// RTO expiry: exponential backoff. RFC 6298 (5.5) doubles the RTO up to `max_rto`;
    /// ns-2 (`rtt_backoff`) doubles `t_backoff_` (up to 64 or while below `max_rto`) and
    /// after the fourth doubling moves SRTT into RTTVAR so that the next sample starts the
    /// estimator afresh.
    pub(super) fn backoff_rto(&mut self) {
        if self.cfg.rtt_tick.0 > 0 {
            if self.snd.backoff < 64 || self.tick_rto() < self.cfg.max_rto {
                self.snd.backoff = self.snd.backoff.saturating_mul(2);
            }
            let s = &mut self.snd;
            if s.backoff > 8 {
                s.tick_rttvar += s.tick_srtt >> 3;
                s.tick_srtt = 0;
            }
            self.snd.rto = self.tick_rto();
        } else {
            self.snd.rto = SimTime((self.snd.rto.0 * 2).min(self.cfg.max_rto.0));
        }
    }

    /// RTO := SRTT + max(G, 4·RTTVAR), clamped to [min_rto, max_rto], rounded up to G.
    pub fn compute_rto(&self) -> SimTime {
        let g = self.cfg.rto_granularity.0.max(1);
        let raw = self.snd.srtt.0 + g.max(4 * self.snd.rttvar.0);
        let rounded = raw.div_ceil(g) * g;
        SimTime(rounded.max(self.cfg.min_rto.0).min(self.cfg.max_rto.0))
    }
}

/// The phase of flow `id`'s tick clock, uniform in [0, tick): ns-2 draws `boot_time_`
/// per agent from its RNG; here a fixed hash of the flow id (SplitMix64 finaliser), so a
/// run does not depend on the order flows are created in.
pub(super) fn tick_phase(id: u32, tick: SimTime) -> SimTime {
    if tick.0 == 0 {
        return SimTime::ZERO;
    }
    let mut z = (id as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    SimTime(z % tick.0)
}
