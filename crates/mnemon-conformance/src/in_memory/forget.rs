//! The rows forgetting reads, removes and rewrites, kept in memory: what
//! the SQL backends get from statements (`ForgetSql`), written over the
//! tables. Which rows follow which is core's (`engine::forget`).

use std::sync::Arc;

use mnemon_core::assemble::retrieve::HitSource;
use mnemon_core::engine::forget::{ForgetAudit, ForgetRows, ForgetWrites, Held, HeldKind, Matched};
use mnemon_core::memory::{DocKind, HotKind, StoreError, StoreResult};

use super::{Ids, InMemoryStore, Tables};

/// Whether `text` holds `phrase`, ASCII letters compared without case (as
/// SQLite's `lower`).
fn holds(text: &str, phrase: &str) -> bool {
    text.to_ascii_lowercase()
        .contains(&phrase.to_ascii_lowercase())
}

/// Whether any string in `value` holds `phrase`.
fn any_string_holds(value: &serde_json::Value, phrase: &str) -> bool {
    match value {
        serde_json::Value::String(s) => holds(s, phrase),
        serde_json::Value::Array(items) => items.iter().any(|v| any_string_holds(v, phrase)),
        serde_json::Value::Object(map) => map.values().any(|v| any_string_holds(v, phrase)),
        _ => false,
    }
}

/// Text that was JSON when read must be JSON when written back.
fn json(text: &str, what: &str) -> StoreResult<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::Invalid(format!("the rewritten {what} is not JSON: {e}")))
}

impl Tables {
    fn held(&self, kind: HeldKind) -> Vec<Held> {
        match kind {
            HeldKind::Compactions => self
                .compactions
                .iter()
                .map(|c| Held::Compaction {
                    seq: c.key,
                    session: c.session_id.clone(),
                    summary: c.summary.clone(),
                    audit: c.audit.to_string(),
                })
                .collect(),
            HeldKind::SessionSummaries => self
                .sessions
                .iter()
                .filter_map(|s| {
                    Some(Held::SessionSummary {
                        id: s.id.clone(),
                        summary: s.summary.clone()?,
                    })
                })
                .collect(),
            HeldKind::Checkpoints => self
                .checkpoints
                .iter()
                .map(|c| Held::Checkpoint {
                    id: c.id.clone(),
                    session: c.session_id.clone(),
                    json: c.json.clone(),
                })
                .collect(),
            HeldKind::EngineStates => self
                .engine_states
                .iter()
                .map(|s| Held::EngineState {
                    agent: s.0.clone(),
                    state: s.2.clone(),
                })
                .collect(),
            HeldKind::Substitutions => self
                .substitutions
                .iter()
                .filter_map(|s| {
                    Some(Held::Substitution {
                        op_seq: s.op_seq,
                        text: s.replacement.as_ref()?.text.clone(),
                    })
                })
                .collect(),
            HeldKind::Artifacts => {
                let mut all: Vec<Held> = self
                    .artifacts
                    .iter()
                    .map(|a| Held::Artifact {
                        path: a.path.clone(),
                        content: a.content.to_string(),
                    })
                    .collect();
                all.sort_by(|a, b| held_path(a).cmp(held_path(b)));
                all
            }
            HeldKind::Documents => self
                .documents
                .iter()
                .map(|d| Held::Document {
                    kind: d.kind.stem().to_string(),
                    version: d.version as i64,
                    content: d.content.clone(),
                })
                .collect(),
        }
    }

    /// Writes `row`'s text over the stored row of its kind and key, or
    /// removes that row (`keep` false).
    fn put_held(&mut self, row: &Held, keep: bool) -> StoreResult<()> {
        match row {
            Held::Compaction {
                seq,
                summary,
                audit,
                ..
            } => {
                let audit = if keep {
                    Some(json(audit, "audit")?)
                } else {
                    None
                };
                self.compactions.retain_mut(|c| {
                    if c.key != *seq {
                        return true;
                    }
                    if let Some(audit) = &audit {
                        let c = Arc::make_mut(c);
                        c.summary = summary.clone();
                        c.audit = audit.clone();
                    }
                    keep
                });
            }
            Held::SessionSummary { id, summary } => {
                for s in self.sessions.iter_mut().filter(|s| &s.id == id) {
                    Arc::make_mut(s).summary = Some(summary.clone());
                }
                if !keep {
                    self.sessions.retain(|s| &s.id != id);
                }
            }
            Held::Checkpoint { id, json, .. } => self.checkpoints.retain_mut(|c| {
                if &c.id != id {
                    return true;
                }
                Arc::make_mut(c).json = json.clone();
                keep
            }),
            Held::EngineState { agent, state } => self.engine_states.retain_mut(|s| {
                if &s.0 != agent {
                    return true;
                }
                let s = Arc::make_mut(s);
                s.1 += 1;
                s.2 = state.clone();
                keep
            }),
            Held::Substitution { op_seq, text } => self.substitutions.retain_mut(|s| {
                if s.op_seq != *op_seq {
                    return true;
                }
                if let Some(r) = &mut Arc::make_mut(s).replacement {
                    r.text = text.clone();
                }
                keep
            }),
            Held::Artifact { path, content } => {
                let content = if keep {
                    Some(json(content, "archive")?)
                } else {
                    None
                };
                self.artifacts.retain_mut(|a| {
                    if &a.path != path {
                        return true;
                    }
                    if let Some(content) = &content {
                        Arc::make_mut(a).content = content.clone();
                    }
                    keep
                });
            }
            Held::Document {
                kind,
                version,
                content,
            } => {
                let kind: DocKind = kind.parse().map_err(StoreError::Invalid)?;
                self.documents.retain_mut(|d| {
                    if d.kind != kind || d.version as i64 != *version {
                        return true;
                    }
                    Arc::make_mut(d).content = content.clone();
                    keep
                });
            }
        }
        Ok(())
    }
}

fn held_path(h: &Held) -> &str {
    match h {
        Held::Artifact { path, .. } => path,
        _ => "",
    }
}

impl ForgetRows for InMemoryStore {
    fn message_seq(&self, id: &str) -> StoreResult<i64> {
        self.read(|t| {
            let full = Ids::of(t.messages.iter().map(|m| (m.seq, m.id.as_str())))
                .resolve("messages", "message", id)?;
            t.messages
                .iter()
                .find(|m| m.id == full)
                .map(|m| m.seq)
                .ok_or_else(|| StoreError::NotFound {
                    what: "message",
                    id: id.to_string(),
                })
        })
    }

    fn matching(&self, phrase: &str) -> StoreResult<Matched> {
        self.read(|t| {
            let mut hot_items: Vec<String> = Vec::new();
            for h in &t.hot_history {
                let held =
                    holds(&h.text, phrase) || h.detail.as_deref().is_some_and(|d| holds(d, phrase));
                if held && !hot_items.contains(&h.id) {
                    hot_items.push(h.id.clone());
                }
            }
            Ok(Matched {
                operations: t
                    .operations
                    .iter()
                    .filter(|o| any_string_holds(&o.data, phrase))
                    .map(|o| o.seq)
                    .collect(),
                messages: t
                    .messages
                    .iter()
                    .filter(|m| holds(&m.content, phrase))
                    .map(|m| m.seq)
                    .collect(),
                hot_items,
                decisions: t
                    .decisions
                    .iter()
                    .filter(|d| {
                        holds(&d.title, phrase)
                            || holds(&serde_json::to_string(&d.row).unwrap_or_default(), phrase)
                    })
                    .map(|d| d.id.clone())
                    .collect(),
            })
        })
    }

    fn decision_hot_items(&self, id: &str) -> StoreResult<Vec<String>> {
        let tail = format!("({id})");
        self.read(|t| {
            Ok(t.hot_items
                .iter()
                .filter(|h| h.kind == HotKind::Decision && h.text.ends_with(&tail))
                .map(|h| h.id.clone())
                .collect())
        })
    }

    fn hot_texts(&self, id: &str) -> StoreResult<Vec<String>> {
        self.read(|t| {
            Ok(t.hot_history
                .iter()
                .filter(|h| h.id == id)
                .flat_map(|h| [h.text.clone(), h.detail.clone().unwrap_or_default()])
                .collect())
        })
    }

    fn operations_logging(&self, id: &str) -> StoreResult<Vec<i64>> {
        self.read(|t| {
            Ok(t.operations
                .iter()
                .filter(|o| o.data.get("id").and_then(|v| v.as_str()) == Some(id))
                .map(|o| o.seq)
                .collect())
        })
    }

    fn held(&self, kind: HeldKind) -> StoreResult<Vec<Held>> {
        self.read(|t| Ok(t.held(kind)))
    }
}

impl ForgetWrites for InMemoryStore {
    fn session_logs(&self, id: &str) -> StoreResult<(Vec<i64>, Vec<i64>)> {
        self.read(|t| {
            let ops = t
                .operations
                .iter()
                .filter(|o| o.session_id.as_deref() == Some(id))
                .map(|o| o.seq);
            let msgs = t
                .messages
                .iter()
                .filter(|m| m.session_id.as_deref() == Some(id))
                .map(|m| m.seq);
            Ok((ops.collect(), msgs.collect()))
        })
    }

    fn delete_operation(&self, seq: i64) -> StoreResult<()> {
        self.write(|t| {
            t.drop_vectors(HitSource::Operation, seq);
            t.substitutions.retain(|s| s.op_seq != seq);
            t.operations.retain(|o| o.seq != seq);
            Ok(())
        })
    }

    fn delete_message(&self, seq: i64) -> StoreResult<()> {
        self.write(|t| {
            t.drop_vectors(HitSource::Message, seq);
            t.messages.retain(|m| m.seq != seq);
            Ok(())
        })
    }

    fn delete_hot_item(&self, id: &str) -> StoreResult<()> {
        self.write(|t| {
            for h in t
                .hot_items
                .iter_mut()
                .filter(|h| h.parent_id.as_deref() == Some(id))
            {
                Arc::make_mut(h).parent_id = None;
            }
            t.hot_history.retain(|h| h.id != id);
            t.hot_items.retain(|h| h.id != id);
            t.hot_version += 1;
            Ok(())
        })
    }

    fn delete_decision(&self, id: &str) -> StoreResult<()> {
        self.write(|t| {
            for d in t
                .decisions
                .iter_mut()
                .filter(|d| d.superseded_by.as_deref() == Some(id))
            {
                Arc::make_mut(d).superseded_by = None;
            }
            t.decisions.retain(|d| d.id != id);
            Ok(())
        })
    }

    fn delete_session(&self, id: &str) -> StoreResult<()> {
        self.write(|t| {
            t.sessions.retain(|s| s.id != id);
            Ok(())
        })
    }

    fn rewrite_held(&self, row: &Held) -> StoreResult<()> {
        self.write(|t| t.put_held(row, true))
    }

    fn remove_held(&self, row: &Held) -> StoreResult<()> {
        self.write(|t| t.put_held(row, false))
    }

    fn record_forgetting(&self, audit: &ForgetAudit) -> StoreResult<()> {
        self.write(|t| {
            t.forgettings.push(Arc::new(audit.clone()));
            Ok(())
        })
    }
}
