//! Text output: numbers people can read, colour only where it helps.

use anstyle::{AnsiColor, Style};
use mnemon_core::window::Zone;

pub const BOLD: Style = Style::new().bold();
pub const DIM: Style = Style::new().dimmed();
pub const WARN: Style = AnsiColor::Yellow.on_default().bold();

pub use mnemon_core::text::thousands;

pub fn zone_style(zone: Zone) -> Style {
    let color = match zone {
        Zone::Green => AnsiColor::Green,
        Zone::Yellow => AnsiColor::Yellow,
        Zone::Orange => AnsiColor::BrightRed,
        Zone::Red => AnsiColor::Red,
    };
    color.on_default().bold()
}

/// A bar `width` cells wide, filled to `fraction` (clamped to 1).
pub fn bar(fraction: f64, width: usize, zone: Zone) -> String {
    let filled = ((fraction.clamp(0.0, 1.0) * width as f64).round() as usize).min(width);
    let style = zone_style(zone);
    format!(
        "{style}{}{style:#}{DIM}{}{DIM:#}",
        "█".repeat(filled),
        "░".repeat(width - filled)
    )
}

/// Prints `value` as pretty JSON on stdout.
pub fn json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    anstream::println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
