//! Text output: numbers people can read, colour only where it helps.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::OnceLock;

use anstyle::{AnsiColor, Style};
use mnemon_core::window::Zone;

/// A style that paints only when standard output takes colour (a terminal,
/// `--color always`, no `NO_COLOR`). Standard output is written with plain
/// `print!`, so that piped output keeps stored text's exact bytes; these
/// styles are what keeps colour codes out of it.
#[derive(Debug, Clone, Copy)]
pub struct Paint(pub Style);

impl std::fmt::Display for Paint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !colour() {
            return Ok(());
        }
        if f.alternate() {
            write!(f, "{:#}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

/// Whether standard output takes colour, decided once (after `--color`).
pub fn colour() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
    })
}

pub const BOLD: Paint = Paint(Style::new().bold());
pub const DIM: Paint = Paint(Style::new().dimmed());
pub const WARN: Paint = Paint(AnsiColor::Yellow.on_default().bold());

/// Stored text as shown: on a terminal, control characters (escape
/// sequences that set titles, write the clipboard, clear the screen, plant
/// links) are written visibly escaped, as `\x1b`, the way `git` and `ls`
/// show them; piped, the text is unchanged, byte for byte.
pub fn stored(text: &str) -> Cow<'_, str> {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    if !*TERMINAL.get_or_init(|| std::io::stdout().is_terminal()) {
        return Cow::Borrowed(text);
    }
    escape_controls(text)
}

/// `text` with every control character but newline and tab escaped.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            let n = u32::from(c);
            if n < 0x100 {
                out.push_str(&format!("\\x{n:02x}"));
            } else {
                out.push_str(&format!("\\u{{{n:x}}}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

pub use mnemon_core::text::{counted, thousands};

pub fn zone_style(zone: Zone) -> Paint {
    let color = match zone {
        Zone::Green => AnsiColor::Green,
        Zone::Yellow => AnsiColor::Yellow,
        Zone::Orange => AnsiColor::BrightRed,
        Zone::Red => AnsiColor::Red,
    };
    Paint(color.on_default().bold())
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
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// The first 13 characters of a UUIDv7 (its time part) find it again.
pub fn short(id: &str) -> &str {
    &id[..id.len().min(13)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped() {
        let t =
            "title \x1b]0;owned\x07 clip \x1b]52;c;ZXZpbA==\x07 clear \x1b[2J ok\nnext\tcol \u{9b}";
        let e = escape_controls(t);
        assert!(
            !e.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{e}"
        );
        assert!(e.contains("\\x1b]0;owned\\x07"), "{e}");
        assert!(e.contains("\nnext\tcol"), "{e}");
        assert!(matches!(escape_controls("plain text"), Cow::Borrowed(_)));
    }
}
