//! The five optimization profiles of ADR-018 and the parameters each yields.
//!
//! A profile is chosen from the effective window and sets how much memory
//! each tier may hold and how often mnemon checkpoints. The seeds give most
//! numbers outright (ADR-018's profile table and "Small Context Window
//! Strategies", design v2's `AdaptiveOptimizer`); those are used as given.
//!
//! Where the seeds give no number for a profile, it is derived from the
//! nearest profile that has one, as the same share of the window: the seed's
//! number divided by the window it was stated for (the lower edge of that
//! profile's band, or the window the seed names), times this effective
//! window. The rows marked "derived" in [`Provenance`] say which.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::window::MIN_WINDOW;

/// A profile's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProfileName {
    UltraAggressive,
    Aggressive,
    BalancedAggressive,
    Balanced,
    Minimal,
}

impl ProfileName {
    pub const ALL: [ProfileName; 5] = [
        ProfileName::UltraAggressive,
        ProfileName::Aggressive,
        ProfileName::BalancedAggressive,
        ProfileName::Balanced,
        ProfileName::Minimal,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProfileName::UltraAggressive => "ultra-aggressive",
            ProfileName::Aggressive => "aggressive",
            ProfileName::BalancedAggressive => "balanced-aggressive",
            ProfileName::Balanced => "balanced",
            ProfileName::Minimal => "minimal",
        }
    }

    /// The profile for an effective window (ADR-018's bands).
    pub fn for_window(effective: u64) -> ProfileName {
        match effective {
            ..8_192 => ProfileName::UltraAggressive,
            8_192..32_768 => ProfileName::Aggressive,
            32_768..100_000 => ProfileName::BalancedAggressive,
            100_000..250_000 => ProfileName::Balanced,
            _ => ProfileName::Minimal,
        }
    }

    /// The smallest window of this profile's band: the window a seed number
    /// for the band must still fit.
    pub fn band_floor(self) -> u64 {
        match self {
            ProfileName::UltraAggressive => MIN_WINDOW.max(4_096),
            ProfileName::Aggressive => 8_192,
            ProfileName::BalancedAggressive => 32_768,
            ProfileName::Balanced => 100_000,
            ProfileName::Minimal => 250_000,
        }
    }
}

impl fmt::Display for ProfileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ProfileName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().replace('_', "-").to_ascii_lowercase();
        ProfileName::ALL
            .into_iter()
            .find(|p| p.name() == wanted)
            .ok_or_else(|| {
                format!(
                    "unknown optimization profile `{s}`: expected one of {}",
                    ProfileName::ALL.map(|p| p.name()).join(", ")
                )
            })
    }
}

impl Serialize for ProfileName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ProfileName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Where a parameter's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// Stated by a seed for this profile.
    Seed,
    /// Derived from the nearest profile's number as a share of the window.
    Derived,
    /// Set in config.
    Config,
}

/// A parameter with its provenance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Param<T> {
    pub value: T,
    pub source: Provenance,
}

impl<T> Param<T> {
    fn seed(value: T) -> Self {
        Param {
            value,
            source: Provenance::Seed,
        }
    }

    fn derived(value: T) -> Self {
        Param {
            value,
            source: Provenance::Derived,
        }
    }

    fn set(&mut self, value: Option<T>) {
        if let Some(value) = value {
            *self = Param {
                value,
                source: Provenance::Config,
            };
        }
    }
}

/// Every parameter a profile sets, for one effective window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileParams {
    pub name: ProfileName,
    /// The effective window these numbers were computed for.
    pub window: u64,
    pub working_memory_max_operations: Param<u64>,
    pub working_memory_max_tokens: Param<u64>,
    /// Items larger than this are summarized.
    pub summarization_threshold_tokens: Param<u64>,
    pub checkpoint_interval_hours: Param<f64>,
    pub checkpoint_interval_operations: Param<u64>,
    pub session_summary_max_tokens: Param<u64>,
    pub project_state_max_tokens: Param<u64>,
    pub work_plan_max_tokens: Param<u64>,
    pub max_decision_records: Param<u64>,
    pub decision_record_max_tokens: Param<u64>,
    /// Files larger than this enter the artifact registry as summaries.
    pub artifact_registry_threshold_tokens: Param<u64>,
    /// A completed phase is summarized to at most this.
    pub phase_summary_max_tokens: Param<u64>,
    /// The session log is compressed when it passes this.
    pub session_compression_threshold_tokens: Param<u64>,
    /// An episodic document is compressed when it passes this.
    pub episodic_compression_threshold_tokens: Param<u64>,
}

/// Config values that replace a profile's own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProfileOverrides {
    pub working_memory_max_operations: Option<u64>,
    pub working_memory_max_tokens: Option<u64>,
    pub summarization_threshold_tokens: Option<u64>,
    pub checkpoint_interval_hours: Option<f64>,
    pub checkpoint_interval_operations: Option<u64>,
    pub session_summary_max_tokens: Option<u64>,
    pub project_state_max_tokens: Option<u64>,
    pub work_plan_max_tokens: Option<u64>,
    pub max_decision_records: Option<u64>,
    pub decision_record_max_tokens: Option<u64>,
    pub artifact_registry_threshold_tokens: Option<u64>,
    pub phase_summary_max_tokens: Option<u64>,
    pub session_compression_threshold_tokens: Option<u64>,
    pub episodic_compression_threshold_tokens: Option<u64>,
}

/// `seed_value / seed_window × window`, at least 1.
fn share(seed_value: u64, seed_window: u64, window: u64) -> u64 {
    ((seed_value as u128 * window as u128) / seed_window as u128).max(1) as u64
}

/// Design v1 states its compression thresholds (40K session, 30K episodic)
/// for Qwen 2.5 Coder's 128,000-token window.
const V1_WINDOW: u64 = 128_000;

impl ProfileParams {
    /// The parameters of `name` at an effective window of `window` tokens.
    pub fn new(name: ProfileName, window: u64) -> ProfileParams {
        use ProfileName::*;
        let seed = Param::seed;
        let derived = |v, from: ProfileName| Param::derived(share(v, from.band_floor(), window));
        // ADR-018: working memory is 5-10 % of the window; smaller windows get
        // the larger share because their fixed costs weigh more.
        let wm_share_permille = match name {
            UltraAggressive | Aggressive => 100,
            BalancedAggressive | Balanced => 75,
            Minimal => 50,
        };
        let (wm_ops, summarize, hours, ops) = match name {
            UltraAggressive => (10, 100, 0.5, 20),
            Aggressive => (30, 300, 1.0, 50),
            BalancedAggressive => (50, 500, 2.0, 100),
            Balanced => (50, 500, 4.0, 100),
            Minimal => (100, 1_000, 8.0, 200),
        };
        let max_decisions = match name {
            UltraAggressive => 3,
            Aggressive => 5,
            BalancedAggressive => 10,
            Balanced => 20,
            Minimal => 50,
        };
        // ADR-018 "Small Context Window Strategies" covers the three smaller
        // profiles; the two larger ones take balanced-aggressive's shares.
        let (summary, state, plan, decision) = match name {
            UltraAggressive => (seed(200), seed(300), seed(200), seed(100)),
            Aggressive => (seed(500), seed(800), seed(500), seed(200)),
            BalancedAggressive => (seed(3_000), seed(5_000), seed(3_000), seed(300)),
            Balanced | Minimal => (
                derived(3_000, BalancedAggressive),
                derived(5_000, BalancedAggressive),
                derived(3_000, BalancedAggressive),
                derived(300, BalancedAggressive),
            ),
        };
        // Design v2's AdaptiveOptimizer: 500 below 100K, 1,000 to 250K, 2,000
        // above; it has no separate number for the ultra-small band.
        let artifact = match name {
            UltraAggressive => derived(500, Aggressive),
            Aggressive | BalancedAggressive => seed(500),
            Balanced => seed(1_000),
            Minimal => seed(2_000),
        };
        let phase_summary = if name == UltraAggressive { 100 } else { 500 };
        ProfileParams {
            name,
            window,
            working_memory_max_operations: seed(wm_ops),
            working_memory_max_tokens: Param::seed((window * wm_share_permille / 1_000).max(1)),
            summarization_threshold_tokens: seed(summarize),
            checkpoint_interval_hours: Param::seed(hours),
            checkpoint_interval_operations: seed(ops),
            session_summary_max_tokens: summary,
            project_state_max_tokens: state,
            work_plan_max_tokens: plan,
            max_decision_records: seed(max_decisions),
            decision_record_max_tokens: decision,
            artifact_registry_threshold_tokens: artifact,
            phase_summary_max_tokens: seed(phase_summary),
            session_compression_threshold_tokens: Param::derived(share(40_000, V1_WINDOW, window)),
            episodic_compression_threshold_tokens: Param::derived(share(30_000, V1_WINDOW, window)),
        }
    }

    /// The profile ADR-018 picks for this effective window.
    pub fn for_window(window: u64) -> ProfileParams {
        ProfileParams::new(ProfileName::for_window(window), window)
    }

    pub fn with_overrides(mut self, o: &ProfileOverrides) -> ProfileParams {
        self.working_memory_max_operations
            .set(o.working_memory_max_operations);
        self.working_memory_max_tokens
            .set(o.working_memory_max_tokens);
        self.summarization_threshold_tokens
            .set(o.summarization_threshold_tokens);
        self.checkpoint_interval_hours
            .set(o.checkpoint_interval_hours);
        self.checkpoint_interval_operations
            .set(o.checkpoint_interval_operations);
        self.session_summary_max_tokens
            .set(o.session_summary_max_tokens);
        self.project_state_max_tokens
            .set(o.project_state_max_tokens);
        self.work_plan_max_tokens.set(o.work_plan_max_tokens);
        self.max_decision_records.set(o.max_decision_records);
        self.decision_record_max_tokens
            .set(o.decision_record_max_tokens);
        self.artifact_registry_threshold_tokens
            .set(o.artifact_registry_threshold_tokens);
        self.phase_summary_max_tokens
            .set(o.phase_summary_max_tokens);
        self.session_compression_threshold_tokens
            .set(o.session_compression_threshold_tokens);
        self.episodic_compression_threshold_tokens
            .set(o.episodic_compression_threshold_tokens);
        self
    }

    /// The parameters as (name, value, provenance) rows, for display.
    pub fn rows(&self) -> Vec<(&'static str, String, Provenance)> {
        fn row<T: ToString>(
            name: &'static str,
            p: &Param<T>,
        ) -> (&'static str, String, Provenance) {
            (name, p.value.to_string(), p.source)
        }
        vec![
            row(
                "working_memory_max_operations",
                &self.working_memory_max_operations,
            ),
            row("working_memory_max_tokens", &self.working_memory_max_tokens),
            row(
                "summarization_threshold_tokens",
                &self.summarization_threshold_tokens,
            ),
            row("checkpoint_interval_hours", &self.checkpoint_interval_hours),
            row(
                "checkpoint_interval_operations",
                &self.checkpoint_interval_operations,
            ),
            row(
                "session_summary_max_tokens",
                &self.session_summary_max_tokens,
            ),
            row("project_state_max_tokens", &self.project_state_max_tokens),
            row("work_plan_max_tokens", &self.work_plan_max_tokens),
            row("max_decision_records", &self.max_decision_records),
            row(
                "decision_record_max_tokens",
                &self.decision_record_max_tokens,
            ),
            row(
                "artifact_registry_threshold_tokens",
                &self.artifact_registry_threshold_tokens,
            ),
            row("phase_summary_max_tokens", &self.phase_summary_max_tokens),
            row(
                "session_compression_threshold_tokens",
                &self.session_compression_threshold_tokens,
            ),
            row(
                "episodic_compression_threshold_tokens",
                &self.episodic_compression_threshold_tokens,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bands_select_the_adr_profiles() {
        use ProfileName::*;
        let cases = [
            (2_048, UltraAggressive),
            (4_096, UltraAggressive),
            (8_191, UltraAggressive),
            (8_192, Aggressive),
            (16_384, Aggressive),
            (32_767, Aggressive),
            (32_768, BalancedAggressive),
            (99_999, BalancedAggressive),
            (100_000, Balanced),
            (128_000, Balanced),
            (249_999, Balanced),
            (250_000, Minimal),
            (1_000_000, Minimal),
        ];
        for (window, profile) in cases {
            assert_eq!(ProfileName::for_window(window), profile, "window {window}");
        }
    }

    #[test]
    fn names_parse_in_either_spelling() {
        assert_eq!(
            "balanced_aggressive".parse(),
            Ok(ProfileName::BalancedAggressive)
        );
        assert_eq!("Ultra-Aggressive".parse(), Ok(ProfileName::UltraAggressive));
        assert!(
            "lazy"
                .parse::<ProfileName>()
                .unwrap_err()
                .contains("minimal")
        );
    }

    /// The seeds' numbers at the four windows the issue names.
    #[test]
    fn parameters_at_4k_16k_128k_1m() {
        let p = ProfileParams::for_window(4_096);
        assert_eq!(p.name, ProfileName::UltraAggressive);
        assert_eq!(p.working_memory_max_operations.value, 10);
        assert_eq!(p.working_memory_max_tokens.value, 409);
        assert_eq!(p.summarization_threshold_tokens.value, 100);
        assert_eq!(p.checkpoint_interval_hours.value, 0.5);
        assert_eq!(p.checkpoint_interval_operations.value, 20);
        assert_eq!(p.session_summary_max_tokens.value, 200);
        assert_eq!(p.project_state_max_tokens.value, 300);
        assert_eq!(p.work_plan_max_tokens.value, 200);
        assert_eq!(
            (
                p.max_decision_records.value,
                p.decision_record_max_tokens.value
            ),
            (3, 100)
        );
        assert_eq!(p.artifact_registry_threshold_tokens, Param::derived(250));
        assert_eq!(p.phase_summary_max_tokens.value, 100);

        let p = ProfileParams::for_window(16_384);
        assert_eq!(p.name, ProfileName::Aggressive);
        assert_eq!(p.working_memory_max_operations.value, 30);
        assert_eq!(p.working_memory_max_tokens.value, 1_638);
        assert_eq!(p.summarization_threshold_tokens.value, 300);
        assert_eq!(p.checkpoint_interval_hours.value, 1.0);
        assert_eq!(p.checkpoint_interval_operations.value, 50);
        assert_eq!(
            (
                p.session_summary_max_tokens.value,
                p.project_state_max_tokens.value,
                p.work_plan_max_tokens.value
            ),
            (500, 800, 500)
        );
        assert_eq!(
            (
                p.max_decision_records.value,
                p.decision_record_max_tokens.value
            ),
            (5, 200)
        );
        assert_eq!(p.artifact_registry_threshold_tokens, Param::seed(500));

        let p = ProfileParams::for_window(128_000);
        assert_eq!(p.name, ProfileName::Balanced);
        assert_eq!(p.working_memory_max_operations.value, 50);
        assert_eq!(p.working_memory_max_tokens.value, 9_600);
        assert_eq!(p.summarization_threshold_tokens.value, 500);
        assert_eq!(p.checkpoint_interval_hours.value, 4.0);
        assert_eq!(p.checkpoint_interval_operations.value, 100);
        // 3,000 / 32,768 of 128,000, and so on.
        assert_eq!(p.session_summary_max_tokens, Param::derived(11_718));
        assert_eq!(p.project_state_max_tokens, Param::derived(19_531));
        assert_eq!(p.work_plan_max_tokens, Param::derived(11_718));
        assert_eq!(p.decision_record_max_tokens, Param::derived(1_171));
        assert_eq!(p.max_decision_records.value, 20);
        assert_eq!(p.artifact_registry_threshold_tokens.value, 1_000);
        assert_eq!(p.session_compression_threshold_tokens.value, 40_000);
        assert_eq!(p.episodic_compression_threshold_tokens.value, 30_000);

        let p = ProfileParams::for_window(1_000_000);
        assert_eq!(p.name, ProfileName::Minimal);
        assert_eq!(p.working_memory_max_operations.value, 100);
        assert_eq!(p.working_memory_max_tokens.value, 50_000);
        assert_eq!(p.summarization_threshold_tokens.value, 1_000);
        assert_eq!(p.checkpoint_interval_hours.value, 8.0);
        assert_eq!(p.checkpoint_interval_operations.value, 200);
        assert_eq!(p.max_decision_records.value, 50);
        assert_eq!(p.artifact_registry_threshold_tokens.value, 2_000);
        assert_eq!(p.session_summary_max_tokens, Param::derived(91_552));
    }

    #[test]
    fn overrides_replace_and_are_marked() {
        let o = ProfileOverrides {
            working_memory_max_operations: Some(7),
            checkpoint_interval_hours: Some(0.25),
            ..ProfileOverrides::default()
        };
        let p = ProfileParams::for_window(16_384).with_overrides(&o);
        assert_eq!(p.working_memory_max_operations.value, 7);
        assert_eq!(p.working_memory_max_operations.source, Provenance::Config);
        assert_eq!(p.checkpoint_interval_hours.value, 0.25);
        assert_eq!(p.summarization_threshold_tokens.source, Provenance::Seed);
    }

    proptest! {
        /// Whatever the window, the tiers' caps plus working memory fit in it
        /// with room for the live conversation.
        #[test]
        fn caps_fit_the_window(window in 2_048u64..4_000_000) {
            let p = ProfileParams::for_window(window);
            let caps = p.working_memory_max_tokens.value
                + p.session_summary_max_tokens.value
                + p.project_state_max_tokens.value
                + p.work_plan_max_tokens.value
                + p.max_decision_records.value * p.decision_record_max_tokens.value;
            prop_assert!(caps < window, "caps {} window {}", caps, window);
        }
    }
}
