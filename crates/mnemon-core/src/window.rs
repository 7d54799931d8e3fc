//! The context window, its zones and what to do in each.
//!
//! Shares are held in millionths ([`Ratio`]) so that "is 70 % of the window
//! used?" is an integer comparison: with floats, `0.7 * 100_000` is not
//! `70_000` and a zone edge would move by a token.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The smallest effective window mnemon manages: below it the seeds' smallest
/// profile cannot hold its own caps.
pub const MIN_WINDOW: u64 = 2_048;

const PPM: u64 = 1_000_000;

/// A share of the window in (0, 1], exact to a millionth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ratio(u32);

impl Ratio {
    pub const ONE: Ratio = Ratio(PPM as u32);

    /// `None` unless `x` is finite and in (0, 1] after rounding to a millionth.
    pub fn new(x: f64) -> Option<Ratio> {
        if !x.is_finite() || x <= 0.0 || x > 1.0 {
            return None;
        }
        let ppm = (x * PPM as f64).round();
        (ppm >= 1.0).then_some(Ratio(ppm as u32))
    }

    pub const fn from_ppm(ppm: u32) -> Ratio {
        Ratio(ppm)
    }

    pub fn ppm(self) -> u32 {
        self.0
    }

    pub fn as_f64(self) -> f64 {
        self.0 as f64 / PPM as f64
    }

    /// `floor(tokens × self)`.
    pub fn of(self, tokens: u64) -> u64 {
        ((tokens as u128 * self.0 as u128) / PPM as u128) as u64
    }

    /// The least token count that reaches this share of `tokens`:
    /// `used >= self.reached_at(max)` exactly when `used / max >= self`.
    pub fn reached_at(self, tokens: u64) -> u64 {
        (tokens as u128 * self.0 as u128).div_ceil(PPM as u128) as u64
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_f64())
    }
}

/// The four zones of ADR-018, from calm to critical.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Zone {
    Green,
    Yellow,
    Orange,
    Red,
}

impl Zone {
    pub const ALL: [Zone; 4] = [Zone::Green, Zone::Yellow, Zone::Orange, Zone::Red];

    pub fn name(self) -> &'static str {
        match self {
            Zone::Green => "green",
            Zone::Yellow => "yellow",
            Zone::Orange => "orange",
            Zone::Red => "red",
        }
    }
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the orchestrator should do in a zone (ADR-018 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    ProceedNormally,
    MonitorAndPlanCheckpoint,
    OptimizeThenCheckpoint,
    EmergencyCheckpointAndRefresh,
}

impl Action {
    pub const ALL: [Action; 4] = [
        Action::ProceedNormally,
        Action::MonitorAndPlanCheckpoint,
        Action::OptimizeThenCheckpoint,
        Action::EmergencyCheckpointAndRefresh,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Action::ProceedNormally => "proceed_normally",
            Action::MonitorAndPlanCheckpoint => "monitor_and_plan_checkpoint",
            Action::OptimizeThenCheckpoint => "optimize_then_checkpoint",
            Action::EmergencyCheckpointAndRefresh => "emergency_checkpoint_and_refresh",
        }
    }

    /// The action ADR-018 gives a zone.
    pub fn default_for(zone: Zone) -> Action {
        match zone {
            Zone::Green => Action::ProceedNormally,
            Zone::Yellow => Action::MonitorAndPlanCheckpoint,
            Zone::Orange => Action::OptimizeThenCheckpoint,
            Zone::Red => Action::EmergencyCheckpointAndRefresh,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Action {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Action::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Action::ALL.iter().map(|a| a.name()).collect();
                format!("unknown action `{s}`: expected one of {}", names.join(", "))
            })
    }
}

impl Serialize for Action {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Action {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The upper edge of each zone, as shares of the effective window. `red`
/// is the emergency failsafe: at or above it nothing more enters the live
/// context before a refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    pub green: Ratio,
    pub yellow: Ratio,
    pub orange: Ratio,
    pub red: Ratio,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            green: Ratio::from_ppm(500_000),
            yellow: Ratio::from_ppm(700_000),
            orange: Ratio::from_ppm(850_000),
            red: Ratio::from_ppm(950_000),
        }
    }
}

impl Thresholds {
    /// Thresholds must rise strictly: green < yellow < orange < red.
    pub fn is_increasing(&self) -> bool {
        self.green < self.yellow && self.yellow < self.orange && self.orange < self.red
    }
}

/// The action taken in each zone; configurable, ADR-018's by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneActions([Action; 4]);

impl Default for ZoneActions {
    fn default() -> Self {
        ZoneActions(Zone::ALL.map(Action::default_for))
    }
}

impl ZoneActions {
    pub fn new(green: Action, yellow: Action, orange: Action, red: Action) -> Self {
        ZoneActions([green, yellow, orange, red])
    }

    pub fn get(&self, zone: Zone) -> Action {
        self.0[zone as usize]
    }
}

/// Absolute token counts at which each zone begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TokenThresholds {
    /// First token count in yellow.
    pub yellow_from: u64,
    /// First token count in orange.
    pub orange_from: u64,
    /// First token count in red.
    pub red_from: u64,
    /// First token count of the emergency failsafe.
    pub emergency_from: u64,
}

/// A window that cannot be managed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowError {
    #[error(
        "the effective window is {effective} tokens ({configured} × utilization_limit {limit}); mnemon needs at least {min}. Raise context_window.max_tokens or utilization_limit"
    )]
    TooSmall {
        configured: u64,
        limit: Ratio,
        effective: u64,
        min: u64,
    },
    #[error("zone thresholds must rise strictly (green < yellow < orange < red), got {0:?}")]
    ThresholdsNotIncreasing(Thresholds),
}

/// A model's context window as mnemon manages it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextWindow {
    configured_max: u64,
    utilization_limit: Ratio,
    effective_max: u64,
    thresholds: Thresholds,
    actions: ZoneActions,
    at: TokenThresholds,
}

impl ContextWindow {
    pub fn new(
        configured_max: u64,
        utilization_limit: Ratio,
        thresholds: Thresholds,
        actions: ZoneActions,
    ) -> Result<Self, WindowError> {
        if !thresholds.is_increasing() {
            return Err(WindowError::ThresholdsNotIncreasing(thresholds));
        }
        let effective_max = utilization_limit.of(configured_max);
        if effective_max < MIN_WINDOW {
            return Err(WindowError::TooSmall {
                configured: configured_max,
                limit: utilization_limit,
                effective: effective_max,
                min: MIN_WINDOW,
            });
        }
        let at = TokenThresholds {
            yellow_from: thresholds.green.reached_at(effective_max),
            orange_from: thresholds.yellow.reached_at(effective_max),
            red_from: thresholds.orange.reached_at(effective_max),
            emergency_from: thresholds.red.reached_at(effective_max),
        };
        Ok(ContextWindow {
            configured_max,
            utilization_limit,
            effective_max,
            thresholds,
            actions,
            at,
        })
    }

    /// A window with ADR-018's thresholds and actions.
    pub fn with_defaults(configured_max: u64) -> Result<Self, WindowError> {
        Self::new(
            configured_max,
            Ratio::ONE,
            Thresholds::default(),
            ZoneActions::default(),
        )
    }

    pub fn configured_max(&self) -> u64 {
        self.configured_max
    }

    pub fn utilization_limit(&self) -> Ratio {
        self.utilization_limit
    }

    /// `configured_max × utilization_limit`, rounded down.
    pub fn effective_max(&self) -> u64 {
        self.effective_max
    }

    pub fn thresholds(&self) -> Thresholds {
        self.thresholds
    }

    pub fn token_thresholds(&self) -> TokenThresholds {
        self.at
    }

    pub fn zone(&self, used: u64) -> Zone {
        if used >= self.at.red_from {
            Zone::Red
        } else if used >= self.at.orange_from {
            Zone::Orange
        } else if used >= self.at.yellow_from {
            Zone::Yellow
        } else {
            Zone::Green
        }
    }

    pub fn is_emergency(&self, used: u64) -> bool {
        used >= self.at.emergency_from
    }

    pub fn action(&self, zone: Zone) -> Action {
        self.actions.get(zone)
    }

    /// Whether `additional` more tokens keep usage short of orange, the
    /// point where the seeds stop growing the context and start optimizing.
    pub fn supports_expansion(&self, used: u64, additional: u64) -> bool {
        used.saturating_add(additional) < self.at.orange_from
    }

    pub fn status(&self, used: u64) -> WindowStatus {
        let zone = self.zone(used);
        WindowStatus {
            used,
            configured_max: self.configured_max,
            effective_max: self.effective_max,
            utilization_limit: self.utilization_limit.as_f64(),
            fraction: used as f64 / self.effective_max as f64,
            available: self.effective_max.saturating_sub(used),
            zone,
            action: self.action(zone),
            emergency: self.is_emergency(used),
            thresholds: self.at,
        }
    }
}

/// Everything an orchestrator needs to decide its next step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowStatus {
    pub used: u64,
    pub configured_max: u64,
    pub effective_max: u64,
    pub utilization_limit: f64,
    /// `used / effective_max`; may pass 1 when the context has overflowed.
    pub fraction: f64,
    pub available: u64,
    pub zone: Zone,
    pub action: Action,
    pub emergency: bool,
    pub thresholds: TokenThresholds,
}

/// A change the engine must act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WindowEvent {
    ZoneChanged {
        from: Zone,
        to: Zone,
        used: u64,
        action: Action,
    },
    EmergencyEntered {
        used: u64,
    },
    EmergencyCleared {
        used: u64,
    },
}

/// Turns a stream of usage readings into zone-transition events, so the
/// engine acts once per crossing rather than on every reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneMonitor {
    zone: Zone,
    emergency: bool,
}

impl Default for ZoneMonitor {
    fn default() -> Self {
        ZoneMonitor {
            zone: Zone::Green,
            emergency: false,
        }
    }
}

impl ZoneMonitor {
    /// Resume from a known state (after a restart, say).
    pub fn at(zone: Zone, emergency: bool) -> Self {
        ZoneMonitor { zone, emergency }
    }

    pub fn zone(&self) -> Zone {
        self.zone
    }

    /// Records a reading and returns the transitions it caused, zone change
    /// first.
    pub fn observe(&mut self, window: &ContextWindow, used: u64) -> Vec<WindowEvent> {
        let mut events = Vec::new();
        let zone = window.zone(used);
        if zone != self.zone {
            events.push(WindowEvent::ZoneChanged {
                from: self.zone,
                to: zone,
                used,
                action: window.action(zone),
            });
            self.zone = zone;
        }
        let emergency = window.is_emergency(used);
        if emergency != self.emergency {
            events.push(if emergency {
                WindowEvent::EmergencyEntered { used }
            } else {
                WindowEvent::EmergencyCleared { used }
            });
            self.emergency = emergency;
        }
        events
    }
}

#[cfg(test)]
mod tests;
