//! RDMA over Converged Ethernet (RoCEv2) as a host transport: one queue pair per flow, as a
//! NIC runs it, and the congestion controls of lossless fabrics behind one contract
//! ([`cc`]).
//!
//! A RoCE sender is not window-clocked like TCP: the NIC's transmit scheduler picks, each
//! time the host's port is free, the next queue pair whose rate limiter allows a packet and
//! asks it for that packet (a pull). A queue pair therefore meets the transport contract
//! with [`crate::model::transport::Transport::nic_ready`] (when its next packet may leave)
//! and [`crate::model::transport::Transport::nic_pull`] (build it), instead of pushing
//! packets from its timers; nothing waits in the host's queue while the port is paused.
//!
//! Feedback comes back as `Kind::Ack` packets: a positive acknowledgement, a negative one
//! (`flags::NACK`, go-back-N from its `ack`) or a congestion notification packet
//! (`flags::CNP`).

pub mod cc;
pub mod qp;

#[cfg(test)]
mod tests;
