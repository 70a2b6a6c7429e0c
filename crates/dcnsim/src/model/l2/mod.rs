//! Layer-2 congestion management: IEEE 802.1Qau QCN and IEEE 802.3x PAUSE / 802.1Qbb PFC.
//!
//! Pure, self-contained state machines (no events, no packets, no allocation in the
//! per-packet paths); the simulation owns one instance per switch egress queue (CP), per rate
//! limiter (RP) and per switch / transmitter port (PAUSE) and feeds them enqueue, departure,
//! CNM and timer events. Specification: docs/models.md §1 (QCN) and §2
//! (PAUSE/PFC), with Devkota 2010 (ch. II and IV) for QCN and the
//! Atikoglu/Prabhakar slides for the PAUSE watermarks.
//!
//! - [`qcn_cp`]: QCN congestion point (feedback, 6-bit quantisation, sampling; the thesis's
//!   every-packet, congestion-memory and detailed sampling; the hypothetical Nov-2007 sampler).
//! - [`qcn_rp`]: QCN reaction point (rate limiter with fast recovery, active and hyper-active
//!   increase, byte counter and timer, adaptive R_AI; token-bucket pacing).
//! - [`pause`]: switch-side per-input(-priority) watermark accounting with PAUSE generation and
//!   refresh, and the transmitter-side pause timer.
//! - [`pfc_dynamic`]: the dynamic pause threshold over a shared switch buffer, with reserve
//!   and headroom per ingress port × priority (the option `pause.threshold = "dynamic"`).
//!
//! Time is [`crate::base::units::SimTime`] (integer picoseconds) throughout; randomness comes from a
//! caller-provided [`crate::base::rng::Rng`], so every run is deterministic.

pub mod pause;
pub mod pfc_dynamic;
pub mod qcn_cp;
pub mod qcn_rp;

pub use pause::class_priority;
pub use pause::{
    pause_duration, PauseConfig, PauseFrame, PauseMode, PauseState, PauseStats, PauseWatermarks,
    MAX_PAUSE_QUANTA, PAUSE_FRAME_BYTES, PAUSE_FRAME_WIRE_BITS, PAUSE_QUANTUM_BITS, PFC_PRIORITIES,
};
pub use pfc_dynamic::{auto_headroom, DynamicConfig, HeadroomRule, IngressMmu};
pub use qcn_cp::{
    Cnm, CongestionMemory, CongestionPoint, CpConfig, CpStats, Quantizer, SampleSet, Sampling,
    CNM_FRAME_BYTES,
};
pub use qcn_rp::{Phase, ReactionPoint, RpConfig, RpStats};
