//! Warnings about legal but suspicious settings, found once the `Sim` is built.

use crate::base::limits;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::scenario::ctx::Ctx;

/// An Ethernet frame of the standard 1500-byte MTU: a switch buffer below it is warned about.
const FULL_FRAME_BYTES: u64 = 1500;

/// Warn about settings that are legal but rarely meant: a zero switch or NIC buffer, or a
/// switch buffer below one 1500-byte frame (a
/// packet that finds the port busy is dropped; only an idle port passes one), a zero
/// receive window (the sender can never send), an initial window above
/// `limits::INIT_CWND_WARN` segments or above 1000 x the smallest switch buffer.
pub(crate) fn suspicious(ctx: &Ctx, sim: &Sim) {
    let t = &ctx.loaded.scenario.topology;
    let mut min_switch_buf = u64::MAX;
    for p in &sim.net.ports {
        if sim.net.nodes[p.node.idx()].kind == NodeKind::Switch {
            min_switch_buf = min_switch_buf.min(p.limit_bytes);
        }
    }
    if min_switch_buf == 0 {
        let key = if t.switch_buffer.0 == 0 {
            "switch_buffer"
        } else {
            "links"
        };
        let msg = "a switch port has a zero buffer: it drops every packet that finds it busy";
        ctx.warn("topology", key, msg);
    } else if min_switch_buf < FULL_FRAME_BYTES {
        let key = if t.switch_buffer.0 == min_switch_buf {
            "switch_buffer"
        } else {
            "links"
        };
        let msg = format!(
            "a switch port's buffer of {min_switch_buf} bytes holds no {FULL_FRAME_BYTES}-byte \
             frame: it drops every full-size packet that finds it busy"
        );
        ctx.warn("topology", key, &msg);
    }
    if t.nic_buffer.0 == 0 {
        let msg = "zero NIC buffer: a host drops every packet it sends while its NIC is busy";
        ctx.warn("topology", "nic_buffer", msg);
    }
    for f in sim.hosts.flows.iter().filter_map(|f| f.tcp()) {
        let c = &f.cfg;
        if c.rwnd == 0 {
            ctx.warn("tcp", "rwnd", "rwnd = 0: the sender can never send data");
        }
        let iw = u64::from(c.init_cwnd) * u64::from(c.mss);
        if u64::from(c.init_cwnd) > limits::INIT_CWND_WARN {
            let msg = format!(
                "init_cwnd = {} segments: far above RFC 6928's 10 (warned above {})",
                c.init_cwnd,
                limits::INIT_CWND_WARN
            );
            ctx.warn("tcp", "init_cwnd", &msg);
        } else if min_switch_buf > 0 && iw / 1000 > min_switch_buf {
            let msg = format!(
                "the initial window ({iw} bytes) is over 1000 x the smallest switch buffer \
                 ({min_switch_buf} bytes)"
            );
            ctx.warn("tcp", "init_cwnd", &msg);
        }
    }
}
