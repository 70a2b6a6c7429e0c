//! The engine's integration tests, built as one test binary: one module per topic, with
//! the helpers they share in `helpers`.

mod helpers;

mod app_config;
mod apps;
mod aqm_port;
mod custom_cc;
mod dctcp;
mod leafspine;
mod mq_ports;
mod net;
mod rdma;
mod robust;
mod scenarios;
mod schema_defaults;
mod ties;
mod workload_app;
