//! Text output: numbers people can read, colour only where it helps.

use anstyle::{AnsiColor, Style};
use mnemon_core::window::Zone;

pub const BOLD: Style = Style::new().bold();
pub const DIM: Style = Style::new().dimmed();
pub const WARN: Style = AnsiColor::Yellow.on_default().bold();

/// 1234567 → "1,234,567".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_047_576), "1,047,576");
    }
}
