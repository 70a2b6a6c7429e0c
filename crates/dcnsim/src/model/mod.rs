//! Protocol models as pure state machines: each takes `now` and packets and returns packets,
//! verdicts, frames and deadlines. No `Sim`, no serde, no result tables; imports only `base`.

pub mod aqm;
pub mod flow_file;
pub mod l2;
pub mod mq;
pub mod roce;
pub mod tcp;
pub mod transport;
pub mod workload;
