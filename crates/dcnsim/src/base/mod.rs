//! The vocabulary every other layer uses: time and rate units, the lazily armed timer,
//! packets, random streams, summary statistics and result tables. Imports nothing else from the crate.

pub mod alloc;
pub mod ids;
pub mod int;
pub mod limits;
pub mod packet;
pub mod rng;
pub mod stats;
pub mod table;
pub mod timer;
pub mod units;
