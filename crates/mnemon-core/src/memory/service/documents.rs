//! The episodic documents (project state, work plan, decision log) rendered
//! from the database.

use super::{EPICS_SHOWN, Memory};
use crate::memory::{
    DocKind, Document, DocumentDraft, Entity, EntityStatus, OperationQuery, Store, StoreResult,
};

impl<S: Store + ?Sized> Memory<S> {
    /// Regenerates project_state, work_plan and decision_log from the
    /// entities, this session and the decision records. A document whose
    /// body did not change keeps its version.
    pub fn refresh_documents(&self, keep_versions: u64) -> StoreResult<[Document; 3]> {
        let at = self.clock.now();
        let [(k1, d1), (k2, d2), (k3, d3)] = self.render_documents()?;
        let save = |kind, content: &str| {
            self.store.save_document(&DocumentDraft {
                kind,
                content,
                at,
                keep_versions,
            })
        };
        Ok([save(k1, &d1)?, save(k2, &d2)?, save(k3, &d3)?])
    }

    /// The three episodic documents as they would be saved now, without
    /// saving them, so a caller can save them in its own transaction.
    pub fn render_documents(&self) -> StoreResult<[(DocKind, String); 3]> {
        use crate::memory::entities::{EntityKind, EntityQuery};
        let at = self.clock.now();
        let by_status = |status, limit| {
            self.store.entities(&EntityQuery {
                status: Some(status),
                limit,
                ..EntityQuery::default()
            })
        };
        let in_progress = by_status(EntityStatus::InProgress, Some(50))?;
        let blocked = by_status(EntityStatus::Blocked, Some(50))?;
        let backlog = by_status(EntityStatus::Pending, Some(20))?;
        let counts = self.store.status_counts()?;
        let session = self.store.active_session(&self.agent)?;
        let mut progress = Vec::new();
        if let Some(s) = &session {
            let ops = self.store.operations(&OperationQuery {
                session_id: Some(s.id.clone()),
                limit: Some(500),
                ..OperationQuery::default()
            })?;
            for op in ops.iter().rev().filter(|o| o.kind.starts_with("entity_")) {
                let d = &op.data;
                let label = format!(
                    "{} #{} \"{}\"",
                    d["entity_type"]
                        .as_str()
                        .and_then(|k| k.parse::<EntityKind>().ok())
                        .map_or("Item", |k| k.title()),
                    d["number"],
                    d["title"].as_str().unwrap_or_default()
                );
                progress.push(match op.kind.as_str() {
                    "entity_created" => format!("Created {label}"),
                    _ => format!(
                        "{label} is now {}",
                        op.status.as_deref().unwrap_or("updated")
                    ),
                });
            }
        }
        let mut epics = Vec::new();
        for e in self.store.entities(&EntityQuery {
            kind: Some(EntityKind::Epic),
            limit: Some(EPICS_SHOWN),
            ..EntityQuery::default()
        })? {
            if e.status == EntityStatus::Completed {
                continue;
            }
            let children = self.store.entities(&EntityQuery {
                parent: Some(e.number),
                ..EntityQuery::default()
            })?;
            let done = children
                .iter()
                .filter(|c| c.status == EntityStatus::Completed)
                .count();
            epics.push(format!(
                "{} ({}, priority {}): {} items, {done} completed",
                e.label(),
                e.status,
                e.priority,
                children.len()
            ));
        }
        let state = crate::memory::episodic::project_state(
            at,
            &crate::memory::episodic::ProjectFacts {
                session_id: session.as_ref().map(|s| s.id.as_str()),
                in_progress: &in_progress,
                blocked: &blocked,
                counts: &counts,
                recent_progress: &progress,
                epics: &epics,
            },
        );
        let next: Vec<Entity> = in_progress
            .iter()
            .chain(
                backlog
                    .iter()
                    .filter(|e| e.kind != EntityKind::Milestone)
                    .take(3),
            )
            .cloned()
            .collect();
        let future = self.store.entities(&EntityQuery {
            kind: Some(EntityKind::Milestone),
            status: Some(EntityStatus::Pending),
            ..EntityQuery::default()
        })?;
        let plan = crate::memory::episodic::work_plan(at, &next, &backlog, &future);
        let mut decisions = self.store.decisions(None)?;
        decisions.reverse();
        let log = crate::memory::episodic::decision_log(at, &decisions);
        Ok([
            (DocKind::ProjectState, state),
            (DocKind::WorkPlan, plan),
            (DocKind::DecisionLog, log),
        ])
    }
}
