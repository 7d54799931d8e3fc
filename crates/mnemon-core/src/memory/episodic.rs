//! Episodic documents (tier 3): project_state, work_plan and decision_log,
//! generated from the entities, the session and the decision records, in the
//! layouts of design v1 §3.4. Nothing in them is a placeholder: a section
//! with no facts says so plainly.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::StoreError;
use super::decision::DecisionRecord;
use super::entities::{Entity, EntityKind, EntityStatus, StatusCount};
use super::types::Timestamp;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocKind {
    ProjectState,
    WorkPlan,
    DecisionLog,
}

impl DocKind {
    pub const ALL: [DocKind; 3] = [
        DocKind::ProjectState,
        DocKind::WorkPlan,
        DocKind::DecisionLog,
    ];

    /// The file stem: `memory/<stem>.md`.
    pub fn stem(self) -> &'static str {
        match self {
            DocKind::ProjectState => "project_state",
            DocKind::WorkPlan => "work_plan",
            DocKind::DecisionLog => "decision_log",
        }
    }
}

impl fmt::Display for DocKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.stem())
    }
}

impl FromStr for DocKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DocKind::ALL
            .into_iter()
            .find(|k| k.stem() == s.trim())
            .ok_or_else(|| {
                format!("unknown document `{s}`: expected project_state, work_plan or decision_log")
            })
    }
}

/// One version of a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Document {
    pub kind: DocKind,
    /// 1 for the first version; every change adds 1.
    pub version: u64,
    pub content: String,
    pub created_at: Timestamp,
}

/// What saving a document's content comes to: the current version kept,
/// because the content is it but for its time, or a new version to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextVersion {
    Same(Document),
    New(Document),
}

impl Document {
    /// What saving `content` comes to after `now`, the current version if
    /// any: a render that changed nothing is not a new version.
    pub fn next(now: Option<Document>, kind: DocKind, content: &str, at: Timestamp) -> NextVersion {
        match now {
            Some(doc) if body(&doc.content) == body(content) => NextVersion::Same(doc),
            now => NextVersion::New(Document {
                kind,
                version: now.map_or(1, |d| d.version + 1),
                content: content.to_string(),
                created_at: at,
            }),
        }
    }

    /// The oldest version kept beside this one when `keep_versions` old
    /// ones are: versions before it are removed.
    pub fn oldest_kept(&self, keep_versions: u64) -> u64 {
        self.version.saturating_sub(keep_versions)
    }

    /// The error of asking for a document of `kind` (at `version`) that is
    /// not kept.
    pub fn not_found(kind: DocKind, version: Option<u64>) -> StoreError {
        StoreError::NotFound {
            what: "document version",
            id: format!(
                "{kind}{}",
                version.map(|v| format!(" version {v}")).unwrap_or_default()
            ),
        }
    }
}

/// The content without its `**Last Updated**` line: two renders that differ
/// only in time are the same document.
pub fn body(content: &str) -> String {
    content
        .lines()
        .filter(|l| !l.starts_with("**Last Updated**"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a document says when a section has nothing: useful in the files a
/// person reads, noise in a context a model reads.
pub const PLACEHOLDERS: &[&str] = &[
    "No open epics",
    "Nothing is in progress",
    "No changes this session",
    "None",
    "Nothing is planned yet",
    "The backlog is empty",
    "No milestones are planned",
];

/// A document as a context carries it: placeholder bullets, zero
/// statistics, and the `Last Updated` and `Session` lines dropped, then
/// every heading left with nothing under it. `None` when nothing is left:
/// an empty project's context carries no boilerplate.
pub fn lean(text: &str) -> Option<String> {
    let keep = |l: &str| {
        let t = l.trim();
        if let Some(item) = t.strip_prefix("- ") {
            if PLACEHOLDERS.contains(&item) {
                return false;
            }
            // `- **Total Epics**: 0`
            if item.starts_with("**") && item.ends_with("**: 0") {
                return false;
            }
        }
        !(t.starts_with("**Last Updated**:") || t.starts_with("**Session**:"))
    };
    let lines: Vec<&str> = text.lines().filter(|l| keep(l)).collect();
    // A heading stays only if something that is not a heading of the same
    // or a higher level follows it before the next such heading.
    let level = |l: &str| {
        let t = l.trim_start();
        let n = t.chars().take_while(|c| *c == '#').count();
        (n > 0 && t[n..].starts_with(' ')).then_some(n)
    };
    let mut out: Vec<&str> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(n) = level(l) {
            let has_body = lines[i + 1..]
                .iter()
                .take_while(|next| level(next).is_none_or(|m| m > n))
                .any(|next| level(next).is_none() && !next.trim().is_empty());
            if !has_body {
                continue;
            }
        }
        out.push(l);
    }
    // Blank lines collapse.
    let mut text = String::new();
    let mut blank = true;
    for l in out {
        if l.trim().is_empty() {
            if !blank {
                text.push('\n');
            }
            blank = true;
        } else {
            text.push_str(l);
            text.push('\n');
            blank = false;
        }
    }
    let body = text
        .lines()
        .any(|l| level(l).is_none() && !l.trim().is_empty());
    body.then(|| text.trim_end().to_string())
}

fn bullets(items: impl IntoIterator<Item = String>, empty: &str) -> String {
    let lines: Vec<String> = items.into_iter().map(|i| format!("- {i}")).collect();
    if lines.is_empty() {
        format!("- {empty}")
    } else {
        lines.join("\n")
    }
}

fn line(e: &Entity) -> String {
    let parent = e
        .parent
        .map(|p| format!(", under #{p}"))
        .unwrap_or_default();
    format!("{} (priority {}{parent})", e.label(), e.priority)
}

/// What `project_state` is built from.
#[derive(Debug, Clone, Default)]
pub struct ProjectFacts<'a> {
    pub session_id: Option<&'a str>,
    pub in_progress: &'a [Entity],
    pub blocked: &'a [Entity],
    pub counts: &'a [StatusCount],
    /// What changed this session, one line each ("Created Epic #5 ...").
    pub recent_progress: &'a [String],
    /// Open epics with their progress, one line each, so the big picture
    /// survives the session that created them.
    pub epics: &'a [String],
}

pub fn project_state(at: Timestamp, f: &ProjectFacts<'_>) -> String {
    let count = |kind: Option<EntityKind>, status: Option<EntityStatus>| -> u64 {
        f.counts
            .iter()
            .filter(|c| kind.is_none_or(|k| c.kind == k) && status.is_none_or(|s| c.status == s))
            .map(|c| c.count)
            .sum()
    };
    format!(
        "# Project State\n\n**Last Updated**: {}\n**Session**: {}\n\n## Epics\n\n{}\n\n## Active Work\n\n{}\n\n## Recent Progress\n\n{}\n\n## Blockers\n\n{}\n\n## Statistics\n\n- **Total Epics**: {}\n- **Total Stories**: {}\n- **Total Tasks**: {}\n- **Completed**: {}\n- **In Progress**: {}\n- **Blocked**: {}\n",
        at.datetime().to_rfc3339(),
        f.session_id.unwrap_or("none"),
        bullets(f.epics.iter().cloned(), "No open epics"),
        bullets(f.in_progress.iter().map(line), "Nothing is in progress"),
        bullets(f.recent_progress.iter().cloned(), "No changes this session"),
        bullets(f.blocked.iter().map(line), "None"),
        count(Some(EntityKind::Epic), None),
        count(Some(EntityKind::Story), None),
        count(Some(EntityKind::Task), None),
        count(None, Some(EntityStatus::Completed)),
        count(None, Some(EntityStatus::InProgress)),
        count(None, Some(EntityStatus::Blocked)),
    )
}

/// `next_steps`: in-progress work, then the most urgent pending items;
/// `backlog`: pending work, most urgent first; `future`: pending milestones.
pub fn work_plan(
    at: Timestamp,
    next_steps: &[Entity],
    backlog: &[Entity],
    future: &[Entity],
) -> String {
    let step = |e: &Entity| match e.status {
        EntityStatus::InProgress => format!("Finish {}", e.label()),
        _ => format!("Start {}", e.label()),
    };
    format!(
        "# Work Plan\n\n**Last Updated**: {}\n\n## Immediate Next Steps\n\n{}\n\n## Prioritized Backlog\n\n{}\n\n## Future Work\n\n{}\n",
        at.datetime().to_rfc3339(),
        bullets(next_steps.iter().map(step), "Nothing is planned yet"),
        bullets(backlog.iter().map(line), "The backlog is empty"),
        bullets(future.iter().map(line), "No milestones are planned"),
    )
}

/// Every decision, oldest first, as design v1's log entries.
pub fn decision_log(at: Timestamp, oldest_first: &[DecisionRecord]) -> String {
    let mut out = format!(
        "# Decision Log\n\n**Last Updated**: {}\n",
        at.datetime().to_rfc3339()
    );
    if oldest_first.is_empty() {
        out.push_str("\nNo decisions recorded yet.\n");
    }
    for d in oldest_first {
        let by = d
            .superseded_by
            .as_ref()
            .map(|s| format!(" by {s}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n### [{}] {}: {} ({}{by})\n{}\n",
            d.timestamp.datetime().format("%Y-%m-%d %H:%M:%S"),
            d.id,
            d.title,
            d.status,
            d.decision
        ));
    }
    out
}

#[cfg(test)]
mod lean_tests {
    use super::*;

    #[test]
    fn a_save_that_changes_only_the_time_keeps_the_version_and_any_other_adds_one() {
        let kind = DocKind::WorkPlan;
        let first = match Document::next(None, kind, "**Last Updated**: 1\nplan", Timestamp(1)) {
            NextVersion::New(d) => d,
            NextVersion::Same(d) => panic!("a first save kept {d:?}"),
        };
        assert_eq!(first.version, 1);
        assert_eq!(
            Document::next(
                Some(first.clone()),
                kind,
                "**Last Updated**: 2\nplan",
                Timestamp(2)
            ),
            NextVersion::Same(first.clone())
        );
        match Document::next(
            Some(first),
            kind,
            "**Last Updated**: 3\nplan, changed",
            Timestamp(3),
        ) {
            NextVersion::New(d) => {
                assert_eq!((d.version, d.created_at), (2, Timestamp(3)));
                assert_eq!(d.oldest_kept(1), 1);
                assert_eq!(d.oldest_kept(5), 0);
            }
            NextVersion::Same(d) => panic!("a changed plan kept {d:?}"),
        }
    }

    #[test]
    fn an_empty_document_leaves_nothing_and_a_full_one_keeps_its_facts() {
        let empty = "# Project State\n\n**Last Updated**: 2026\n**Session**: x\n\n## Epics\n\n- No open epics\n\n## Statistics\n\n- **Total Epics**: 0\n- **Completed**: 0\n";
        assert_eq!(lean(empty), None);
        let full = "# Project State\n\n**Last Updated**: 2026\n\n## Epics\n\n- Epic #1 auth (1/3)\n\n## Blockers\n\n- None\n\n## Statistics\n\n- **Total Epics**: 1\n- **Blocked**: 0\n";
        assert_eq!(
            lean(full).unwrap(),
            "# Project State\n\n## Epics\n\n- Epic #1 auth (1/3)\n\n## Statistics\n\n- **Total Epics**: 1"
        );
    }
}
