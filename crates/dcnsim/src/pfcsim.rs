//! IEEE 802.3x PAUSE and IEEE 802.1Qbb priority flow control (PFC) on multi-queue ports,
//! and per-priority PFC at any transmitter (issue 4, Build item 5 "per-priority (PFC) as an
//! option"; `MODELS.md` §2). The pure state machines are `l2/pause.rs`
//! ([`PauseWatermarks`](crate::l2::PauseWatermarks) at the switch,
//! [`PauseState`](crate::l2::PauseState) at the transmitter); `l2sim.rs` wires them for
//! single-FIFO ports; this module adds:
//!
//! - **Priority of a frame** = [`class_priority`]`(Packet::class)` = class mod 8, the same
//!   field the multi-queue classifier uses (`mq::class_to_queue`).
//! - **Switch side, multi-queue egress**: per egress port and class queue, a FIFO of the input
//!   ports of the frames it holds (a queue is FIFO, and every removal — transmission, a
//!   dequeue-time drop, DRR's longest-queue drop — takes its head), so each departure
//!   releases the bytes of the right input × priority. Unlike the single-FIFO path, a frame
//!   that arrives at an idle multi-queue port is counted too (it leaves within the same
//!   picosecond: the transmitter picks it in a `PortTxDone` at `now`, after the accounting).
//! - **PFC frames** are `Kind::Pause` with flag [`PFC_FRAME`] and the priority in `class`
//!   (802.3x frames: no flag). One priority per frame (`l2/pause.rs`).
//! - **Transmitter side**: a multi-queue port (switch or host NIC) with paused priorities
//!   passes over every queue whose head frame has a paused priority
//!   (`MultiQueue::set_paused_priorities`, `Scheduler::dequeue_eligible`) and keeps serving
//!   the others; when every backlogged queue is paused it holds with one event at the
//!   earliest end of a blocking pause (re-armed earlier by a resume, a control frame, or an
//!   arrival to an unpaused queue). A single-FIFO port under PFC holds when its *head* frame's
//!   priority is paused (head-of-line blocking, as a one-queue NIC would). Control frames
//!   (PAUSE, PFC, CNM) go first and are never paused.

use crate::event::Event;
use crate::l2::{class_priority, PauseFrame, PauseMode, PFC_PRIORITIES};
use crate::l2sim::{arm_refresh, send_pause, L2};
use crate::packet::Packet;
use crate::sim::Sim;
use crate::units::SimTime;
use std::collections::VecDeque;

/// `Packet::flags` bit of a `Kind::Pause` frame that is a PFC frame (priority in `class`).
pub const PFC_FRAME: u8 = 1;

/// Priority addressed by a received PAUSE/PFC frame: `None` for 802.3x.
pub fn frame_priority(p: &Packet) -> Option<u8> {
    if p.flags & PFC_FRAME != 0 {
        Some(p.class)
    } else {
        None
    }
}

/// State of PAUSE/PFC on multi-queue ports, and per-priority frame counters.
#[derive(Clone, Debug, Default)]
pub struct MqPause {
    /// Per port: per class queue, the input ports (of this switch) of the frames it holds.
    /// Empty for ports that are not multi-queue egress ports of a pausing switch.
    inq: Vec<Vec<VecDeque<u32>>>,
    /// Input port (of the switch) of the frame being enqueued by `switch_forward_mq`.
    cur_input: u32,
    /// Frames produced by the accounting inside `Sim::mq_enqueue` / `mq_send_next`, sent by
    /// [`flush`] once those return: (input port, frame).
    pending: Vec<(u32, PauseFrame)>,
    /// Per port and priority: PFC frames sent / received (802.3x frames are not counted here).
    pub sent_prio: Vec<[u64; PFC_PRIORITIES]>,
    pub rcvd_prio: Vec<[u64; PFC_PRIORITIES]>,
}

impl MqPause {
    pub fn new(ports: usize) -> MqPause {
        MqPause {
            inq: vec![Vec::new(); ports],
            cur_input: u32::MAX,
            pending: Vec::with_capacity(8),
            sent_prio: vec![[0; PFC_PRIORITIES]; ports],
            rcvd_prio: vec![[0; PFC_PRIORITIES]; ports],
        }
    }

    /// Allocate the input FIFOs of the multi-queue ports of pausing switch `node`.
    pub(crate) fn alloc_switch(&mut self, sim: &Sim, node: u32) {
        for &pid in &sim.nodes[node as usize].ports {
            if let Some(m) = sim.ports[pid as usize].mq.as_ref() {
                self.inq[pid as usize] = vec![VecDeque::new(); m.mq.num_queues()];
            }
        }
    }

    pub(crate) fn count_sent(&mut self, pid: u32, prio: Option<u8>) {
        if let Some(p) = prio {
            if let Some(c) = self.sent_prio.get_mut(pid as usize) {
                c[(p as usize).min(PFC_PRIORITIES - 1)] += 1;
            }
        }
    }

    pub(crate) fn count_rcvd(&mut self, pid: u32, prio: Option<u8>) {
        if let Some(p) = prio {
            if let Some(c) = self.rcvd_prio.get_mut(pid as usize) {
                c[(p as usize).min(PFC_PRIORITIES - 1)] += 1;
            }
        }
    }
}

impl L2 {
    /// `Sim::mq_enqueue` admitted `p` into queue `q` of port `pid` (of `node`).
    #[inline]
    pub(crate) fn mq_arrival(&mut self, now: SimTime, node: u32, pid: u32, q: usize, p: &Packet) {
        let Some(fifos) = self.mqp.inq.get_mut(pid as usize) else {
            return;
        };
        let inp = self.mqp.cur_input;
        if fifos.is_empty() || inp == u32::MAX {
            return;
        }
        let q = q.min(fifos.len() - 1);
        fifos[q].push_back(inp);
        let ii = self.input_idx[inp as usize] as usize;
        if let Some(sw) = self.pause_sw[node as usize].as_mut() {
            if let Some(f) = sw.wm.on_arrival(now, ii, class_priority(p.class), p.size) {
                self.mqp.pending.push((inp, f));
            }
        }
    }

    /// Frame `p` left queue `q` of multi-queue port `pid` (transmitted or dropped).
    #[inline]
    pub(crate) fn mq_left(&mut self, now: SimTime, node: u32, pid: u32, q: usize, p: &Packet) {
        let Some(fifos) = self.mqp.inq.get_mut(pid as usize) else {
            return;
        };
        if fifos.is_empty() {
            return;
        }
        let q = q.min(fifos.len() - 1);
        let Some(inp) = fifos[q].pop_front() else {
            return; // arrived before accounting existed (cannot happen) or from a host
        };
        let ii = self.input_idx[inp as usize] as usize;
        if let Some(sw) = self.pause_sw[node as usize].as_mut() {
            if let Some(f) = sw.wm.on_departure(now, ii, class_priority(p.class), p.size) {
                self.mqp.pending.push((inp, f));
            }
        }
    }
}

fn l2(sim: &mut Sim) -> &mut L2 {
    sim.l2.as_mut().expect("l2 state")
}

/// Send the frames the accounting produced, and arm the switches' refresh events.
fn flush(sim: &mut Sim) {
    while let Some((inp, f)) = l2(sim).mqp.pending.pop() {
        send_pause(sim, inp, f.quanta, f.prio);
        let node = sim.ports[inp as usize].node;
        arm_refresh(sim, node);
    }
}

/// A switch with PAUSE/PFC forwards `p` to multi-queue port `out`.
pub(crate) fn switch_forward_mq(sim: &mut Sim, _node: u32, out: u32, p: Packet) {
    let link = sim.last_in_port;
    let inp = if link == u32::MAX {
        u32::MAX
    } else {
        sim.ports[link as usize].peer_port
    };
    l2(sim).mqp.cur_input = inp;
    sim.enqueue(out, p);
    l2(sim).mqp.cur_input = u32::MAX;
}

/// The end of `Sim::mq_enqueue` with layer 2 on: send the frames the accounting produced and
/// make sure the transmitter looks at the new frame (at once if idle; a held port wakes when
/// the new head may start).
pub(crate) fn mq_after_enqueue(sim: &mut Sim, pid: u32) {
    flush(sim);
    let now = sim.now;
    let i = pid as usize;
    let l2s = sim.l2.as_mut().expect("l2 state");
    let port = &mut sim.ports[i];
    let at = port.busy_until.max(now);
    if !port.tx_pending {
        port.tx_pending = true;
        sim.events.schedule(at, Event::PortTxDone(pid));
        return;
    }
    let h = l2s.hold_at[i];
    if h.is_never() || at >= h {
        return;
    }
    let mask = l2s.pause_tx[i].paused_mask(now);
    let m = port.mq.as_mut().expect("multi-queue port");
    m.mq.set_paused_priorities(mask);
    let startable =
        (0..m.mq.num_queues()).any(|q| !m.mq.queue(q).is_empty() && !m.mq.head_paused(q));
    m.mq.set_paused_priorities(0);
    if startable {
        l2s.hold_at[i] = at;
        sim.events.schedule(at, Event::PortTxDone(pid));
    }
}

/// `PortTxDone` of a multi-queue port with layer 2 on (after `tx_gate`'s stale-event checks):
/// control frames first, then the scheduler over the queues whose head is not paused; hold
/// until the earliest blocking pause ends if nothing may start.
pub(crate) fn mq_tx(sim: &mut Sim, pid: u32) {
    let now = sim.now;
    let i = pid as usize;
    {
        let l2s = sim.l2.as_mut().expect("l2 state");
        let port = &mut sim.ports[i];
        port.tx_pending = false;
        if let Some(c) = port.queue.pop_front() {
            l2s.ctrl_front[i] = l2s.ctrl_front[i].saturating_sub(1);
            let arrive = port.start_tx(now, c);
            crate::sim::arm_arrival(&mut sim.events, &sim.nodes, &sim.ecmp, port, pid, arrive);
            let more = !port.queue.is_empty() || port.mq.as_ref().is_some_and(|m| !m.mq.is_empty());
            if more {
                port.tx_pending = true;
                sim.events.schedule(port.busy_until, Event::PortTxDone(pid));
            }
            return;
        }
        let mask = l2s.pause_tx[i].paused_mask(now);
        let m = port.mq.as_mut().expect("multi-queue port");
        m.mq.set_paused_priorities(mask);
    }
    let sent0 = sim.ports[i].stats.tx_pkts;
    sim.mq_send_next(pid);
    let l2s = sim.l2.as_mut().expect("l2 state");
    let port = &mut sim.ports[i];
    let m = port.mq.as_mut().expect("multi-queue port");
    port.queued_bytes = m.mq.bytes();
    let started = port.stats.tx_pkts != sent0;
    if !started && !m.mq.is_empty() {
        // Every backlogged queue's head is paused: hold until the earliest of those ends.
        let mut t = SimTime::NEVER;
        for q in 0..m.mq.num_queues() {
            if let Some(h) = m.mq.queue(q).head() {
                let u = l2s.pause_tx[i].paused_until(class_priority(h.class));
                if u > now && u < t {
                    t = u;
                }
            }
        }
        if !t.is_never() {
            port.tx_pending = true;
            l2s.hold_at[i] = t;
            sim.events.schedule(t, Event::PortTxDone(pid));
        }
    }
    m.mq.set_paused_priorities(0);
    flush(sim);
}

/// A PAUSE/PFC frame was applied to port `target` (PFC mode or a multi-queue port): keep
/// `Port::paused_until` as the latest pause end (the single-FIFO fast path tests it) and
/// wake a held transmitter so it re-evaluates which frames may start.
pub(crate) fn after_pause_frame(sim: &mut Sim, target: u32) {
    let now = sim.now;
    let i = target as usize;
    let l2s = sim.l2.as_mut().expect("l2 state");
    let port = &mut sim.ports[i];
    port.paused_until = l2s.pause_tx[i].latest_until();
    let h = l2s.hold_at[i];
    let at = port.busy_until.max(now);
    if !h.is_never() && at < h {
        l2s.hold_at[i] = at;
        sim.events.schedule(at, Event::PortTxDone(target));
    }
}

/// Table `pfc_ports`: per port and priority with any PFC activity, frames sent/received and
/// paused time.
pub fn priority_table(sim: &Sim, l: &L2) -> crate::results::Table {
    use crate::results::Table;
    let end = sim.end;
    let (mut port, mut prio, mut sent, mut rcvd, mut paused) =
        (vec![], vec![], vec![], vec![], vec![]);
    for (i, p) in sim.ports.iter().enumerate() {
        for c in 0..PFC_PRIORITIES {
            let s = l.mqp.sent_prio[i][c];
            let r = l.mqp.rcvd_prio[i][c];
            let t = if l.pause_mode == PauseMode::Pfc {
                l.pause_tx[i].paused_time(end, c as u8)
            } else {
                SimTime::ZERO
            };
            if s == 0 && r == 0 && t == SimTime::ZERO {
                continue;
            }
            port.push(p.name.clone());
            prio.push(c as i64);
            sent.push(s as i64);
            rcvd.push(r as i64);
            paused.push(t.as_secs_f64());
        }
    }
    let mut t = Table::new("pfc_ports");
    t.str("port", port)
        .i64("priority", prio)
        .i64("pfc_sent", sent)
        .i64("pfc_received", rcvd)
        .f64("paused_s", paused);
    t
}

#[cfg(test)]
mod tests {
    use super::PFC_FRAME;
    use crate::packet::Packet;
    use crate::results::{Column, Table};
    use crate::units::SimTime;

    use crate::testkit::{col_f64 as col, get, run};
    fn col_str(tables: &[Table], table: &str, c: &str) -> Vec<String> {
        match tables
            .iter()
            .find(|t| t.name == table)
            .and_then(|t| t.get(c))
        {
            Some(Column::Str(v)) => v.clone(),
            _ => panic!("{table}.{c} missing"),
        }
    }
    /// Value of column `c` in the row of `table` where `port` and `priority` match.
    fn row(tables: &[Table], table: &str, port: &str, prio: i64, c: &str) -> f64 {
        let ports = col_str(tables, table, "port");
        let pr = col(tables, table, "priority");
        let v = col(tables, table, c);
        (0..ports.len())
            .find(|&i| ports[i] == port && pr[i] == prio as f64)
            .map(|i| v[i])
            .unwrap_or(0.0)
    }

    /// Nine 1 Gb/s CBR senders (classes alternating 0/1) into one 1 Gb/s receiver, with
    /// two-queue DWRR ports on the switch and no buffer limit.
    fn nine_to_one(mode: &str) -> String {
        let mut s = format!(
            "[sim]\nduration = \"30ms\"\n[topology]\nkind = \"star\"\nservers = 9\n\
             link_rate = \"1Gbps\"\nlink_delay = \"5us\"\nswitch_buffer = \"unlimited\"\n\
             queues = {{ count = 2, scheduler = \"dwrr\", quanta = [1500, 1500], \
             buffer = \"shared\", limit = \"1GB\" }}\n\
             pause = {{ mode = \"{mode}\", hi = \"130KB\", lo = \"110KB\" }}\n"
        );
        for i in 1..=9 {
            s.push_str(&format!(
                "[[apps]]\nkind = \"cbr\"\nsrc = \"server{i}\"\ndst = \"client\"\nrate = \"1Gbps\"\n\
                 packet_size = 1500\nclass = {}\n",
                i % 2
            ));
        }
        s
    }

    #[test]
    fn pfc_makes_a_9_to_1_overload_lossless_on_multi_queue_ports() {
        let t = run(&nine_to_one("pfc"));
        assert_eq!(get(&t, "summary", "drops"), 0.0);
        let sent = get(&t, "summary", "pause_sent");
        assert!(sent >= 9.0, "{sent}");
        assert_eq!(sent, get(&t, "summary", "pause_received"));
        // Every sender gets paused on its own priority (1 for odd servers, 0 for even).
        for i in 1..=9 {
            let port = format!("server{i}->sw");
            let p = (i % 2) as i64;
            assert!(
                row(&t, "pfc_ports", &port, p, "pfc_received") >= 1.0,
                "{port}"
            );
            assert_eq!(row(&t, "pfc_ports", &port, 1 - p, "pfc_received"), 0.0);
            assert!(row(&t, "pfc_ports", &port, p, "paused_s") > 0.01, "{port}");
        }
        // The receiver link stays busy and the switch queue stays bounded: each input holds
        // at most HI + what arrives during one round trip of the PAUSE (< 140 KB).
        let gp = get(&t, "summary", "goodput_mbps");
        assert!(gp > 900.0, "{gp}");
        let maxq = col(&t, "ports", "max_queue_bytes")
            .into_iter()
            .fold(0.0, f64::max);
        assert!(maxq > 9.0 * 100_000.0 && maxq < 9.0 * 140_000.0, "{maxq}");
        // Without PAUSE/PFC, a finite buffer overflows.
        let lossy = run(&nine_to_one("pfc")
            .replace(
                "pause = { mode = \"pfc\", hi = \"130KB\", lo = \"110KB\" }",
                "",
            )
            .replace("limit = \"1GB\"", "limit = \"1000KB\""));
        assert!(get(&lossy, "summary", "drops") > 1000.0);
    }

    /// Seed-004 topology with CBR: n1 -> n3 (class 1, the culprit) and n2 -> n4 (class 0, the
    /// innocent), 4 Gb/s each over 10 Gb/s links; B -> n3 serves 500 Mb/s from `slow_at`.
    fn two_classes(pause: &str, slow: bool) -> String {
        let mut s = String::from(
            "[sim]\nduration = \"30ms\"\n[topology]\nkind = \"explicit\"\nlink_rate = \"10Gbps\"\n\
             link_delay = \"3us\"\nswitch_buffer = \"unlimited\"\n\
             queues = { count = 2, scheduler = \"dwrr\", quanta = [1500, 1500], limit = \"1GB\" }\n",
        );
        s.push_str(pause);
        s.push('\n');
        for (n, k) in [
            ("A", "switch"),
            ("B", "switch"),
            ("n1", "host"),
            ("n2", "host"),
        ] {
            s.push_str(&format!(
                "[[topology.nodes]]\nname = \"{n}\"\nkind = \"{k}\"\n"
            ));
        }
        for n in ["n3", "n4"] {
            s.push_str(&format!(
                "[[topology.nodes]]\nname = \"{n}\"\nkind = \"host\"\n"
            ));
        }
        for (a, b) in [
            ("n1", "A"),
            ("n2", "A"),
            ("A", "B"),
            ("B", "n3"),
            ("B", "n4"),
        ] {
            s.push_str(&format!("[[topology.links]]\na = \"{a}\"\nb = \"{b}\"\n"));
        }
        if slow {
            s.push_str(
                "[[topology.rate_changes]]\nport = \"B->n3\"\nat = \"0ms\"\nrate = \"500Mbps\"\n",
            );
        }
        for (src, dst, class) in [("n1", "n3", 1), ("n2", "n4", 0)] {
            s.push_str(&format!(
                "[[apps]]\nkind = \"cbr\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nrate = \"4Gbps\"\n\
                 packet_size = 1500\nclass = {class}\n"
            ));
        }
        s
    }

    fn app_goodput(t: &[Table], app: usize) -> f64 {
        col(t, "apps", "goodput_mbps")[app]
    }

    #[test]
    fn pfc_pauses_only_the_congested_priority() {
        let pfc = "pause = { mode = \"pfc\" }";
        let base = run(&two_classes(pfc, false));
        let innocent0 = app_goodput(&base, 1);
        // Uncongested: both classes carry their 4 Gb/s (minus UDP/IP headers and start-up).
        assert!(innocent0 > 3800.0 && innocent0 < 4000.0, "{innocent0}");
        assert_eq!(get(&base, "summary", "pause_sent"), 0.0);

        let t = run(&two_classes(pfc, true));
        assert_eq!(get(&t, "summary", "drops"), 0.0);
        let culprit = app_goodput(&t, 0);
        let innocent = app_goodput(&t, 1);
        // The culprit gets the 500 Mb/s service rate (tolerance 3 %: headers, start-up);
        // the innocent keeps its uncongested rate within 1 %.
        assert!(
            (culprit - 500.0 * 1472.0 / 1500.0).abs() < 15.0,
            "{culprit}"
        );
        assert!(
            (innocent - innocent0).abs() < 0.01 * innocent0,
            "{innocent} vs {innocent0}"
        );
        // Only priority 1 was paused: B paused A on priority 1 and A paused n1 on priority 1.
        assert!(row(&t, "pfc_ports", "A->B", 1, "pfc_received") >= 1.0);
        assert!(row(&t, "pfc_ports", "n1->A", 1, "pfc_received") >= 1.0);
        assert!(row(&t, "pfc_ports", "A->B", 1, "paused_s") > 0.02);
        for p in ["A->B", "n1->A", "n2->A"] {
            assert_eq!(row(&t, "pfc_ports", p, 0, "pfc_received"), 0.0, "{p}");
            assert_eq!(row(&t, "pfc_ports", p, 0, "paused_s"), 0.0, "{p}");
        }
        assert_eq!(row(&t, "pfc_ports", "n2->A", 1, "pfc_received"), 0.0);

        // 802.3x PAUSE on the same ports: A->B stops for both classes, the innocent is
        // dragged down to about the culprit's rate (DWRR serves the two queues 1:1).
        let p = run(&two_classes("pause = { mode = \"pause\" }", true));
        assert_eq!(get(&p, "summary", "drops"), 0.0);
        let dragged = app_goodput(&p, 1);
        assert!(dragged < 0.25 * innocent0, "{dragged}");
        assert!(get(&p, "summary", "paused_s") > 0.02);
    }

    #[test]
    fn pfc_runs_are_deterministic() {
        let s = two_classes("pause = { mode = \"pfc\" }", true);
        let strip = |mut v: Vec<Table>| {
            for t in v.iter_mut() {
                t.columns.retain(|c| c.0 != "wall_s");
            }
            v
        };
        // Compared as text: NaN (avg_minrate_mbps without QCN) is not equal to itself.
        let (a, b) = (strip(run(&s)), strip(run(&s)));
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert!(a.iter().any(|t| t.name == "pfc_ports"));
    }

    #[test]
    fn pfc_mode_is_checked() {
        let e = crate::run_text(
            &two_classes("pause = { mode = \"ppp\" }", false),
            "x.toml",
            &[],
            &mut |_| true,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("x.toml") && e.contains("topology.pause"), "{e}");
        assert!(e.contains("ppp") && e.contains("pfc"), "{e}");
        // QCN with multi-queue ports stays refused, naming the field.
        let e = crate::run_text(&two_classes("qcn = {}", false), "x.toml", &[], &mut |_| {
            true
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("topology.qcn") && e.contains("multi-queue"),
            "{e}"
        );
    }
    /// h1 -> sw -> h2 at 10 Gb/s; h1's NIC has two strict-priority queues (class 0 first);
    /// two 1 Gb/s CBR sources of 1500-B datagrams on h1 (class 0 and class 1, one every
    /// 12 us from t = 0). A PFC frame for priority 0 with 1000 quanta (51.2 us at 10 Gb/s)
    /// reaches h1 at t = 0. Returns the result tables after `dur`.
    fn scripted(dur: &str, prio: Option<u8>) -> Vec<Table> {
        let mut text = format!(
            "[sim]\nduration = \"{dur}\"\n[topology]\nkind = \"explicit\"\n\
             link_rate = \"10Gbps\"\nlink_delay = \"1us\"\npause = {{ mode = \"pfc\" }}\n"
        );
        for (n, k) in [("sw", "switch"), ("h1", "host"), ("h2", "host")] {
            text.push_str(&format!(
                "[[topology.nodes]]\nname = \"{n}\"\nkind = \"{k}\"\n"
            ));
        }
        for (a, b) in [("h1", "sw"), ("sw", "h2")] {
            text.push_str(&format!("[[topology.links]]\na = \"{a}\"\nb = \"{b}\"\n"));
        }
        text.push_str(
            "[[topology.queue_ports]]\nport = \"h1->sw\"\ncount = 2\nscheduler = \"sp\"\n",
        );
        for class in [0, 1] {
            text.push_str(&format!(
                "[[apps]]\nkind = \"cbr\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"1Gbps\"\n\
                 packet_size = 1500\nclass = {class}\n"
            ));
        }
        let loaded = crate::scenario::load(&text, "scripted.toml", &[]).expect("loads");
        let (mut sim, info) = crate::scenario::build(&loaded).expect("builds");
        let h1 = sim.node_by_name("h1").unwrap();
        sim.last_in_port = sim.port_by_name("sw->h1").unwrap();
        let frame = Packet {
            flow: u32::MAX,
            src: sim.node_by_name("sw").unwrap(),
            dst: h1,
            seq: 1000,
            ack: 0,
            size: crate::l2::PAUSE_FRAME_BYTES,
            payload: 0,
            kind: crate::packet::Kind::Pause,
            flags: if prio.is_some() { PFC_FRAME } else { 0 },
            ecn: crate::packet::Ecn::NotEct,
            class: prio.unwrap_or(0),
            enq_time: SimTime::ZERO,
            sent_time: SimTime::ZERO,
            sack: crate::packet::SackBlocks::EMPTY,
        };
        assert!(crate::l2sim::receive(&mut sim, h1, frame, u32::MAX));
        sim.last_in_port = u32::MAX;
        sim.start();
        sim.run(&mut |_| true);
        crate::results::collect(&loaded, &sim, &info, 0.0)
    }

    fn queue_tx(t: &[Table], port: &str, q: i64) -> f64 {
        let ports = col_str(t, "queues", "port");
        let qs = col(t, "queues", "queue");
        let tx = col(t, "queues", "tx_pkts");
        (0..ports.len())
            .find(|&i| ports[i] == port && qs[i] == q as f64)
            .map(|i| tx[i])
            .expect("queue row")
    }

    #[test]
    fn scripted_pfc_frame_exact_counters() {
        // During the pause (0..51.2 us) queue 0 (priority 0, strict) sends nothing and queue 1
        // is not stalled behind it: its datagrams of t = 0, 12, 24, 36 us leave at once.
        let t = scripted("40us", Some(0));
        assert_eq!(queue_tx(&t, "h1->sw", 0), 0.0);
        assert_eq!(queue_tx(&t, "h1->sw", 1), 4.0);
        assert_eq!(row(&t, "pfc_ports", "h1->sw", 0, "pfc_received"), 1.0);
        assert_eq!(row(&t, "pfc_ports", "h1->sw", 0, "paused_s"), 40e-6);
        assert_eq!(row(&t, "pfc_ports", "h1->sw", 1, "paused_s"), 0.0);
        assert_eq!(get(&t, "summary", "pause_received"), 1.0);
        assert_eq!(get(&t, "summary", "paused_s"), 40e-6);
        // After 100 us: the pause lapsed at exactly 51.2 us (1000 x 512 bit / 10 Gb/s); the 5
        // held datagrams (0..48 us) and those of 60..96 us went out: 9 per queue.
        let t = scripted("100us", Some(0));
        assert_eq!(queue_tx(&t, "h1->sw", 0), 9.0);
        assert_eq!(queue_tx(&t, "h1->sw", 1), 9.0);
        assert_eq!(row(&t, "pfc_ports", "h1->sw", 0, "paused_s"), 51.2e-6);
        let l2 = col(&t, "l2_ports", "paused_s");
        assert_eq!(l2, vec![51.2e-6]);
        // An 802.3x PAUSE on the same (PFC) port stops both queues for 51.2 us: 8
        // priority-times of 40 us in the l2 total, nothing sent.
        let t = scripted("40us", None);
        assert_eq!(queue_tx(&t, "h1->sw", 0), 0.0);
        assert_eq!(queue_tx(&t, "h1->sw", 1), 0.0);
        assert!((get(&t, "summary", "paused_s") - 8.0 * 40e-6).abs() < 1e-15);
    }
}
