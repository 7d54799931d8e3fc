//! What a committed write changed, rendered into the views under `.mnemon/`:
//! at once by a short-lived process, or later by the background renderer.

use mnemon_core::engine::{Checkpoint, EngineEvent};
use mnemon_core::memory::{DecisionRecord, Memory};

use crate::error::Result;
use crate::views::Views;

/// Renders what a committed write changed; every failure is a warning.
pub(crate) fn render_with(
    views: &Views,
    keep_versions: u64,
    m: &Memory<crate::ProjectStore>,
    events: &[EngineEvent],
    touched: Touched,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut note = |r: Result<()>| {
        if let Err(err) = r {
            warnings.push(format!(
                "the write is stored, but a view under .mnemon/ was not updated ({err}); `mnemon export` writes them all again"
            ));
        }
    };
    note(views.write_checkpoints(m, &touched.checkpoints));
    for ev in events {
        if let EngineEvent::Optimized { artifacts, .. } = ev {
            note(views.write_artifacts(m, Some(artifacts)).map(drop));
        }
    }
    for d in &touched.decisions {
        note(views.write_decision(d));
    }
    for s in &touched.sessions {
        note(views.write_session(m, s));
    }
    if touched.views {
        let covered = if touched.logged {
            // Unreadable heads only cost a render.
            m.store().log_heads().ok()
        } else {
            None
        };
        note(views.refresh(m, keep_versions, covered));
    }
    warnings
}

/// Files a write changed besides the session and documents.
#[derive(Default)]
pub(crate) struct Touched {
    pub decisions: Vec<DecisionRecord>,
    pub sessions: Vec<String>,
    pub checkpoints: Vec<Checkpoint>,
    /// Whether the session file and the episodic documents need rendering.
    pub views: bool,
    /// Whether the write appended to the log, so that a later render that
    /// read the log past it already shows it.
    pub logged: bool,
}

impl Touched {
    /// A write that changed what the session file and documents show.
    pub(crate) fn rendered() -> Touched {
        Touched {
            views: true,
            ..Touched::default()
        }
    }

    /// A rendered write that also appended to the log.
    pub(crate) fn logged() -> Touched {
        Touched {
            logged: true,
            ..Touched::rendered()
        }
    }

    pub(crate) fn with_decisions(self, decisions: Vec<DecisionRecord>) -> Touched {
        Touched { decisions, ..self }
    }

    pub(crate) fn with_sessions(self, sessions: Vec<String>) -> Touched {
        Touched { sessions, ..self }
    }
}
