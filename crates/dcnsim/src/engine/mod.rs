//! The discrete-event engine and the network elements, in layers (each file names only the
//! modules listed before it; `tests/layers.rs` checks it):
//!
//! - `event` — the event queue; `observe` — samplers, traces, queue means;
//! - `net` — nodes, ports and their transmitters, links, routes, ECMP groups, the
//!   multi-queue port's state;
//! - `datapath` — `Core` and the per-packet path through ports, switches, hosts and the
//!   layer-2 glue;
//! - `apps` — applications, driving a `&mut Core`;
//! - `sim` — `Sim`: the core plus the applications, the event loop and dispatch.
//!
//! The hot path: no serde and no result tables; imports only `base` and `model`.

pub mod apps;
pub mod datapath;
pub mod event;
pub mod net;
pub mod observe;
pub mod sim;
