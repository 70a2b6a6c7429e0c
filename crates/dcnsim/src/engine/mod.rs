//! The discrete-event engine and the network elements: the event queue, nodes, ports and
//! routes, hosts and their applications, the layer-2 glue and the observers. The hot path:
//! no serde and no result tables; imports only `base` and `model`.

pub mod apps;
pub mod ecmp;
pub mod event;
pub mod l2;
pub mod mq_port;
pub mod net;
pub mod observe;
pub mod pfc;
pub mod sim;
