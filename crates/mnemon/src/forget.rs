//! Forgetting through the front door: the engine forgets in one unit of
//! work, then the rendered files that held the forgotten words are
//! rewritten, and what was said is looked for in files typed by hand.

use mnemon_core::engine::forget::{ForgetAudit, ForgetTarget, Forgotten};

use crate::Mnemon;
use crate::error::{Error, Result};

/// The shortest text of a forgotten item that takes a history line with
/// it: shorter ones ("ok", "yes") are in lines that said something else.
const SAID_MIN_CHARS: usize = 8;

impl Mnemon {
    /// Forgets records, messages, hot items, decisions or sessions, named
    /// as `o12`, `m7`, `DR-…` or by id (or unique prefix), and everything
    /// that holds them; the views are rendered again without them. With
    /// `dry_run`, only says what would go. `matching` phrases forget every
    /// record, message, hot item and decision whose text holds one.
    pub fn forget(
        &self,
        targets: &[String],
        matching: &[String],
        dry_run: bool,
    ) -> Result<Forgotten> {
        let targets: Vec<ForgetTarget> = targets
            .iter()
            .map(|t| ForgetTarget::parse(t))
            .chain(matching.iter().map(|t| ForgetTarget::matching(t)))
            .collect::<std::result::Result<_, String>>()
            .map_err(Error::Input)?;
        let e = self.engine()?;
        // The chat history keeps lines as typed: a line that said what is
        // forgotten goes too. What the ids named is read before it is gone.
        let typed = self
            .dir()
            .map(|d| d.join(crate::CHAT_HISTORY))
            .filter(|p| !dry_run && p.is_file());
        let said = match &typed {
            Some(_) => said_by(&e, &e.forget(&targets, true)?)?,
            None => Vec::new(),
        };
        let f = e.forget(&targets, dry_run)?;
        if !dry_run {
            // Every agent's engine counts its live window on from where it
            // last counted; what went must not stay counted.
            let engines = self.inner.engines.lock().unwrap_or_else(|p| p.into_inner());
            for other in engines.values() {
                other.recount_live();
            }
        }
        if !dry_run && let Some(v) = self.views() {
            v.forget(e.memory(), &f, self.keep_versions())?;
        }
        if let Some(path) = typed {
            forget_typed(&path, matching, &said)?;
        }
        Ok(f)
    }

    /// The audit of forgetting, newest first: ids and counts, no content.
    pub fn forgettings(&self, limit: usize) -> Result<Vec<ForgetAudit>> {
        Ok(self.engine()?.forgettings(crate::reads::listing(limit)?)?)
    }
}

/// The texts the forgotten items held: operations' string values,
/// messages, hot items and decisions' titles.
fn said_by(e: &crate::ProjectEngine, f: &Forgotten) -> Result<Vec<String>> {
    fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let store = e.memory().store();
    let mut out = Vec::new();
    for op in store.operations_at(&f.operations)? {
        strings(&op.data, &mut out);
    }
    out.extend(
        store
            .messages_at(&f.messages)?
            .into_iter()
            .map(|m| m.content),
    );
    for id in &f.hot_items {
        if let Ok(h) = store.hot_item(id) {
            out.push(h.text);
            out.extend(h.detail);
        }
    }
    for id in &f.decisions {
        if let Ok(d) = store.decision(id) {
            out.push(d.title);
        }
    }
    Ok(out
        .into_iter()
        .map(|t| t.trim().to_lowercase())
        .filter(|t| t.chars().count() >= SAID_MIN_CHARS)
        .collect())
}

/// Drops the history lines that hold a `matching` phrase or a text a
/// forgotten item held.
fn forget_typed(path: &std::path::Path, matching: &[String], said: &[String]) -> Result<()> {
    if matching.is_empty() && said.is_empty() {
        return Ok(());
    }
    let text = match std::fs::read(path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
    };
    let needles: Vec<String> = matching
        .iter()
        .map(|m| m.trim().to_lowercase())
        .chain(said.iter().cloned())
        .collect();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let l = l.to_lowercase();
            !needles.iter().any(|n| l.contains(n.as_str()))
        })
        .collect();
    if kept.len() == text.lines().count() {
        return Ok(());
    }
    let mut out = kept.join("\n");
    out.push('\n');
    crate::views::write_atomically(path, out.as_bytes())
}
