//! The memory context the live window holds: what is loaded when an epoch
//! begins, and so the epoch's baseline.
//!
//! Sections go in priority order (hot context, session summary, project
//! state, work plan, recent decisions, working memory, recent messages),
//! each cut to its cap by whole lines with a notice saying what was left
//! out; then, if the whole still exceeds the budget, the lowest-priority
//! sections shrink first. The result is counted exactly and never exceeds
//! the budget. Context assembly for a prompt (`mnemon context`) builds on
//! the same rule with more sections and a query.

use serde::Serialize;

use crate::memory::{DecisionRecord, HotContext, Message, Operation, data_text};
use crate::tokens::TokenCounter;

#[derive(Debug)]
pub struct LiveParts<'a> {
    pub hot: &'a HotContext,
    pub session_summary: Option<&'a str>,
    pub project_state: Option<&'a str>,
    pub work_plan: Option<&'a str>,
    /// Newest first, already limited to the profile's count.
    pub decisions: &'a [DecisionRecord],
    /// Oldest first.
    pub working: &'a [Operation],
    /// Oldest first.
    pub messages: &'a [Message],
}

/// Per-section caps, from the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LiveCaps {
    pub hot: u64,
    pub session_summary: u64,
    pub project_state: u64,
    pub work_plan: u64,
    pub decision_each: u64,
    pub decisions: u64,
    pub working: u64,
    pub messages: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveContext {
    pub text: String,
    pub tokens: u64,
    /// `(section, tokens)` as rendered on its own.
    pub sections: Vec<(&'static str, u64)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// The first lines matter most (documents, hot context).
    Head,
    /// The last lines matter most (logs).
    Tail,
}

struct Section {
    name: &'static str,
    title: &'static str,
    lines: Vec<String>,
    keep: Keep,
    cap: u64,
}

/// Operation lines as working memory shows them.
pub fn operation_line(op: &Operation) -> String {
    let time = op.created_at.datetime().format("%H:%M");
    let status = op
        .status
        .as_deref()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    format!("- [{time}] {}{status}: {}", op.kind, data_text(&op.data))
}

pub fn render(
    parts: &LiveParts<'_>,
    caps: LiveCaps,
    budget: u64,
    counter: &dyn TokenCounter,
) -> LiveContext {
    let lines_of = |s: Option<&str>| -> Vec<String> {
        s.map(|t| t.lines().map(str::to_string).collect())
            .unwrap_or_default()
    };
    let hot = if parts.hot.items.is_empty() {
        Vec::new()
    } else {
        lines_of(Some(&parts.hot.to_markdown()))
    };
    let decisions: Vec<String> = parts
        .decisions
        .iter()
        .rev()
        .map(|d| {
            let line = format!(
                "- {} {} ({}): {}",
                d.id,
                d.title,
                d.status.name(),
                d.decision
            );
            fit_lines(&[line], Keep::Head, caps.decision_each, counter)
        })
        .filter(|l| !l.is_empty())
        .collect();
    let mut sections = vec![
        Section {
            name: "hot_context",
            title: "",
            lines: hot,
            keep: Keep::Head,
            cap: caps.hot,
        },
        Section {
            name: "session_summary",
            title: "## Session Summary",
            lines: lines_of(parts.session_summary),
            keep: Keep::Tail,
            cap: caps.session_summary,
        },
        Section {
            name: "project_state",
            title: "",
            lines: lines_of(parts.project_state),
            keep: Keep::Head,
            cap: caps.project_state,
        },
        Section {
            name: "work_plan",
            title: "",
            lines: lines_of(parts.work_plan),
            keep: Keep::Head,
            cap: caps.work_plan,
        },
        Section {
            name: "decisions",
            title: "## Recent Decisions",
            lines: decisions,
            keep: Keep::Tail,
            cap: caps.decisions,
        },
        Section {
            name: "working_memory",
            title: "## Working Memory",
            lines: parts.working.iter().map(operation_line).collect(),
            keep: Keep::Tail,
            cap: caps.working,
        },
        Section {
            name: "recent_messages",
            title: "## Recent Messages",
            lines: parts
                .messages
                .iter()
                .map(|m| format!("{}: {}", m.role.name(), m.content.replace('\n', " ")))
                .collect(),
            keep: Keep::Tail,
            cap: caps.messages,
        },
    ];
    sections.retain(|s| !s.lines.is_empty());
    let mut caps_now: Vec<u64> = sections.iter().map(|s| s.cap.min(budget)).collect();
    loop {
        let rendered: Vec<String> = sections
            .iter()
            .zip(&caps_now)
            .map(|(s, &cap)| section_text(s, cap, counter))
            .collect();
        let text = rendered
            .iter()
            .filter(|t| !t.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n");
        let tokens = counter.count(&text) as u64;
        if tokens <= budget {
            let per = sections
                .iter()
                .zip(&rendered)
                .map(|(s, t)| (s.name, counter.count(t) as u64))
                .collect();
            return LiveContext {
                text,
                tokens,
                sections: per,
            };
        }
        // Shrink the lowest-priority section that still has room to give.
        match caps_now.iter().rposition(|&c| c > 0) {
            Some(i) => caps_now[i] /= 2,
            None => {
                return LiveContext {
                    text: String::new(),
                    tokens: 0,
                    sections: Vec::new(),
                };
            }
        }
    }
}

fn section_text(s: &Section, cap: u64, counter: &dyn TokenCounter) -> String {
    if cap == 0 {
        return String::new();
    }
    let mut lines = Vec::new();
    if !s.title.is_empty() {
        lines.push(s.title.to_string());
    }
    lines.extend(s.lines.iter().cloned());
    let title_lines = usize::from(!s.title.is_empty());
    let text = lines.join("\n");
    if counter.count(&text) as u64 <= cap {
        return text;
    }
    let body = fit_lines(&s.lines, s.keep, cap, counter);
    if body.is_empty() {
        return String::new();
    }
    let mut out = lines[..title_lines].join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&body);
    if counter.count(&out) as u64 <= cap {
        out
    } else {
        body
    }
}

/// The first lines of `lines` that fit in `cap`, with a notice of the rest.
pub fn fit_head(lines: &[String], cap: u64, counter: &dyn TokenCounter) -> String {
    fit_lines(lines, Keep::Head, cap, counter)
}

/// As many whole lines as fit in `cap` tokens together with a notice of how
/// many were left out; the first lines for [`Keep::Head`], the last for
/// [`Keep::Tail`]. A single line that does not fit is cut at a word.
fn fit_lines(lines: &[String], keep: Keep, cap: u64, counter: &dyn TokenCounter) -> String {
    let build = |n: usize| -> String {
        let left = lines.len() - n;
        let kept: Vec<&str> = match keep {
            Keep::Head => lines[..n].iter().map(String::as_str).collect(),
            Keep::Tail => lines[lines.len() - n..]
                .iter()
                .map(String::as_str)
                .collect(),
        };
        let notice = (left > 0).then(|| format!("({left} more lines are in the store)"));
        let mut parts: Vec<&str> = Vec::new();
        if keep == Keep::Tail
            && let Some(n) = &notice
        {
            parts.push(n);
        }
        parts.extend(kept);
        if keep == Keep::Head
            && let Some(n) = &notice
        {
            parts.push(n);
        }
        parts.join("\n")
    };
    let fits = |n: usize| counter.count(&build(n)) as u64 <= cap;
    if fits(lines.len()) {
        return build(lines.len());
    }
    // The largest n that fits; fitting is monotone in n up to a token or two
    // of BPE join effects, which the final check covers.
    let (mut lo, mut hi) = (0usize, lines.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) { lo = mid } else { hi = mid - 1 }
    }
    if lo > 0 && fits(lo) {
        return build(lo);
    }
    if lines.len() == 1 {
        let words: Vec<&str> = lines[0].split(' ').collect();
        let (mut lo, mut hi) = (0usize, words.len());
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            let t = format!("{} …", words[..mid].join(" "));
            if counter.count(&t) as u64 <= cap {
                lo = mid
            } else {
                hi = mid - 1
            }
        }
        if lo > 0 {
            return format!("{} …", words[..lo].join(" "));
        }
        return String::new();
    }
    let notice = build(0);
    if counter.count(&notice) as u64 <= cap {
        notice
    } else {
        String::new()
    }
}
