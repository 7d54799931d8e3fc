//! Decision records, project entities and episodic documents.

use std::sync::Arc;

use mnemon_core::memory::episodic::NextVersion;
use mnemon_core::memory::{
    DecisionRecord, DecisionStore, DocKind, Document, DocumentDraft, DocumentStore, Entity,
    EntityChange, EntityDraft, EntityQuery, EntityStore, StatusCount, StatusWrite, StoreError,
    StoreResult, Timestamp, decision_id, drawn_decision_id,
};

use super::{Ids, InMemoryStore, Keyed, Tables, new_id};

impl Tables {
    fn decision_index(&self, id: &str) -> StoreResult<usize> {
        let full = Ids::of(
            self.decisions
                .iter()
                .enumerate()
                .map(|(i, d)| (i as i64 + 1, d.id.as_str())),
        )
        .resolve("decisions", "decision record", &decision_id(id))?;
        self.decisions
            .iter()
            .position(|d| d.id == full)
            .ok_or_else(|| StoreError::NotFound {
                what: "decision record",
                id: id.to_string(),
            })
    }

    /// The entity numbered `number`, and where it is; a deleted one is an
    /// error that says when it was deleted.
    fn entity_index(&self, number: u64) -> StoreResult<usize> {
        let i = self
            .entities
            .iter()
            .position(|e| e.0.number == number)
            .ok_or_else(|| StoreError::NotFound {
                what: "entity",
                id: format!("#{number}"),
            })?;
        match &*self.entities[i] {
            (e, Some(at)) => Err(e.deleted(*at)),
            (_, None) => Ok(i),
        }
    }

    fn live_entities(&self) -> impl Iterator<Item = &Entity> {
        self.entities.iter().filter(|e| e.1.is_none()).map(|e| &e.0)
    }

    /// Saves `content` as `kind`'s next version, unless it is the current
    /// one but for its time, and keeps `keep_versions` old ones.
    pub(super) fn save_document(&mut self, d: &DocumentDraft<'_>) -> Document {
        let kind = d.kind;
        let doc = match Document::next(self.current_document(kind), kind, d.content, d.at) {
            NextVersion::Same(doc) => return doc,
            NextVersion::New(doc) => doc,
        };
        let oldest = doc.oldest_kept(d.keep_versions);
        self.last_document += 1;
        self.documents.push(Arc::new(Keyed {
            key: self.last_document,
            row: doc.clone(),
        }));
        self.documents
            .retain(|d| d.kind != kind || d.version >= oldest);
        doc
    }

    fn current_document(&self, kind: DocKind) -> Option<Document> {
        self.documents
            .iter()
            .filter(|d| d.kind == kind)
            .max_by_key(|d| d.version)
            .map(|d| Document::clone(d))
    }
}

impl DecisionStore for InMemoryStore {
    fn insert_decision(&self, draft: &DecisionRecord) -> StoreResult<DecisionRecord> {
        self.write(|t| {
            // Eight hex digits can collide; draw again, as the SQL backends
            // do when their unique key refuses one.
            for _ in 0..8 {
                let id = drawn_decision_id(&new_id());
                if t.decisions.iter().any(|d| d.id == id) {
                    continue;
                }
                let r = DecisionRecord {
                    id,
                    ..draft.clone()
                };
                t.last_decision += 1;
                t.decisions.push(Arc::new(Keyed {
                    key: t.last_decision,
                    row: r.clone(),
                }));
                return Ok(r);
            }
            Err(StoreError::Backend(
                "could not draw a unique decision id".into(),
            ))
        })
    }

    fn decision(&self, id: &str) -> StoreResult<DecisionRecord> {
        self.read(|t| Ok(DecisionRecord::clone(&t.decisions[t.decision_index(id)?])))
    }

    fn decisions(&self, limit: Option<usize>) -> StoreResult<Vec<DecisionRecord>> {
        self.read(|t| {
            Ok(t.decisions
                .iter()
                .rev()
                .take(limit.unwrap_or(usize::MAX))
                .map(|d| DecisionRecord::clone(d))
                .collect())
        })
    }

    /// Like the SQL backends' `UPDATE`, a full id that names no decision
    /// changes nothing: the memory service read the decision first.
    fn write_decision_status(&self, w: &StatusWrite<'_>) -> StoreResult<()> {
        self.write(|t| {
            if let Some(d) = t.decisions.iter_mut().find(|d| d.id == w.id) {
                let d = Arc::make_mut(d);
                d.status = w.status;
                if let Some(by) = w.superseded_by {
                    d.superseded_by = Some(by.to_string());
                }
            }
            Ok(())
        })
    }
}

impl EntityStore for InMemoryStore {
    fn create_entity(&self, d: &EntityDraft) -> StoreResult<Entity> {
        self.write(|t| {
            if !(1..=5).contains(&d.priority) {
                return Err(StoreError::Invalid(format!(
                    "priority {} is out of range; give 1 (highest) to 5",
                    d.priority
                )));
            }
            if let Some(p) = d.parent
                && !t.entities.iter().any(|e| e.0.number == p)
            {
                return Err(StoreError::NotFound {
                    what: "entity",
                    id: format!("#{p}"),
                });
            }
            let number = t.entities.iter().map(|e| e.0.number).max().unwrap_or(0) + 1;
            let e = Entity {
                number,
                kind: d.kind,
                title: d.title.clone(),
                description: d.description.clone(),
                status: d.status,
                priority: d.priority,
                parent: d.parent,
                created_at: d.at,
                updated_at: d.at,
            };
            t.entities.push(Arc::new((e.clone(), None)));
            Ok(e)
        })
    }

    fn entity(&self, number: u64) -> StoreResult<Entity> {
        self.read(|t| Ok(t.entities[t.entity_index(number)?].0.clone()))
    }

    fn update_entity(&self, number: u64, c: &EntityChange, at: Timestamp) -> StoreResult<Entity> {
        self.write(|t| {
            let i = t.entity_index(number)?;
            t.entities[i].0.check_change(c)?;
            let e = &mut Arc::make_mut(&mut t.entities[i]).0;
            if let Some(title) = &c.title {
                e.title = title.clone();
            }
            if let Some(description) = &c.description {
                e.description = Some(description.clone());
            }
            e.status = c.status.unwrap_or(e.status);
            e.priority = c.priority.unwrap_or(e.priority);
            e.updated_at = at;
            Ok(e.clone())
        })
    }

    fn delete_entity(&self, number: u64, at: Timestamp) -> StoreResult<Entity> {
        self.write(|t| {
            let i = t.entity_index(number)?;
            let mut children: Vec<Entity> = t
                .live_entities()
                .filter(|e| e.parent == Some(number))
                .cloned()
                .collect();
            children.sort_by_key(|e| e.number);
            children.truncate(6);
            t.entities[i].0.check_deletable(&children)?;
            let row = Arc::make_mut(&mut t.entities[i]);
            row.0.updated_at = at;
            row.1 = Some(at);
            Ok(row.0.clone())
        })
    }

    fn entities(&self, q: &EntityQuery) -> StoreResult<Vec<Entity>> {
        self.read(|t| {
            let mut found: Vec<Entity> = t
                .live_entities()
                .filter(|e| {
                    q.kind.is_none_or(|k| e.kind == k)
                        && q.status.is_none_or(|s| e.status == s)
                        && q.parent.is_none_or(|p| e.parent == Some(p))
                })
                .cloned()
                .collect();
            found.sort_by_key(|e| (e.priority, e.number));
            found.truncate(q.limit.unwrap_or(usize::MAX));
            Ok(found)
        })
    }

    fn status_counts(&self) -> StoreResult<Vec<StatusCount>> {
        self.read(|t| {
            let mut counts: Vec<StatusCount> = Vec::new();
            for e in t.live_entities() {
                match counts
                    .iter_mut()
                    .find(|c| c.kind == e.kind && c.status == e.status)
                {
                    Some(c) => c.count += 1,
                    None => counts.push(StatusCount {
                        kind: e.kind,
                        status: e.status,
                        count: 1,
                    }),
                }
            }
            // By name, as the SQL backends order their text columns.
            counts.sort_by_key(|c| (c.kind.name(), c.status.name()));
            Ok(counts)
        })
    }
}

impl DocumentStore for InMemoryStore {
    fn save_document(&self, draft: &DocumentDraft<'_>) -> StoreResult<Document> {
        self.write(|t| Ok(t.save_document(draft)))
    }

    fn document(&self, kind: DocKind, version: Option<u64>) -> StoreResult<Document> {
        self.read(|t| {
            let found = match version {
                None => t.current_document(kind),
                Some(v) => t
                    .documents
                    .iter()
                    .find(|d| d.kind == kind && d.version == v)
                    .map(|d| Document::clone(d)),
            };
            found.ok_or_else(|| Document::not_found(kind, version))
        })
    }

    fn document_versions(&self, kind: DocKind) -> StoreResult<Vec<Document>> {
        self.read(|t| {
            let mut all: Vec<Document> = t
                .documents
                .iter()
                .filter(|d| d.kind == kind)
                .map(|d| Document::clone(d))
                .collect();
            all.sort_by_key(|d| std::cmp::Reverse(d.version));
            Ok(all)
        })
    }
}
