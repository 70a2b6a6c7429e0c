//! `[meta]` and `[sim]`.

use super::units::Dur;
use serde::Deserialize;

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub id: Option<String>,
    pub title: Option<String>,
    pub source: Option<String>,
}

/// `[sim]`. `duration` is required; `seed` takes its default from `SimCfg::default_seed`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimCfg {
    /// Simulated time (required).
    pub duration: Dur,
    /// Seed of every random stream of the run.
    #[serde(default = "SimCfg::default_seed")]
    pub seed: u64,
}

impl SimCfg {
    /// Seed 1: our choice (no source fixes one); every run without `seed` draws the same
    /// random streams, so results are reproducible.
    fn default_seed() -> u64 {
        1
    }
}
