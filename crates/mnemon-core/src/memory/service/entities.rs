//! Epics, stories and tasks through the memory rules: parents of the allowed
//! kind, each change logged in the same unit of work.

use serde_json::json;

use super::Memory;

use crate::memory::{
    Atomically, Entity, EntityChange, EntityDraft, EntityStatus, NewEntity, NewOperation,
    Operation, Store, StoreError, StoreResult,
};

impl<S: Store + ?Sized> Memory<S> {
    /// Creates an entity under a parent of an allowed kind, and records it
    /// in the same unit of work.
    pub fn create_entity(&self, e: &NewEntity) -> StoreResult<Entity> {
        let title = e.title.trim();
        if title.is_empty() {
            return Err(StoreError::Invalid(format!("a {} needs a title", e.kind)));
        }
        let priority = e.priority.unwrap_or(3);
        if !(1..=5).contains(&priority) {
            return Err(StoreError::Invalid(format!(
                "priority {priority} is out of range: use 1 (most urgent) to 5"
            )));
        }
        if let Some(p) = e.parent {
            let parent = self.store.entity(p)?;
            if !e.kind.allowed_parents().contains(&parent.kind) {
                let allowed: Vec<_> = e.kind.allowed_parents().iter().map(|k| k.name()).collect();
                return Err(StoreError::Invalid(format!(
                    "a {} cannot go under {}; its parent must be {}",
                    e.kind,
                    parent.label(),
                    if allowed.is_empty() {
                        "nothing".to_string()
                    } else {
                        allowed.join(" or ")
                    }
                )));
            }
        }
        self.store.atomically(|| {
            let entity = self.store.create_entity(&EntityDraft {
                kind: e.kind,
                title: self.clean_text(title, true),
                description: e
                    .description
                    .as_deref()
                    .map(|d| self.clean_text(d, true))
                    .filter(|d| !d.trim().is_empty()),
                priority,
                parent: e.parent,
                status: EntityStatus::Pending,
                at: self.clock.now(),
            })?;
            self.log_entity("entity_created", &entity)?;
            Ok(entity)
        })
    }

    pub fn update_entity(&self, number: u64, change: &EntityChange) -> StoreResult<Entity> {
        if let Some(p) = change.priority
            && !(1..=5).contains(&p)
        {
            return Err(StoreError::Invalid(format!(
                "priority {p} is out of range: use 1 (most urgent) to 5"
            )));
        }
        let change = EntityChange {
            title: change.title.as_deref().map(|t| self.clean_text(t, true)),
            description: change
                .description
                .as_deref()
                .map(|d| self.clean_text(d, true)),
            ..change.clone()
        };
        let change = &change;
        self.store.atomically(|| {
            let entity = self.store.update_entity(number, change, self.clock.now())?;
            self.log_entity("entity_updated", &entity)?;
            Ok(entity)
        })
    }

    /// Deletes an entity with no live children; its number stays taken.
    pub fn delete_entity(&self, number: u64) -> StoreResult<Entity> {
        self.store.atomically(|| {
            let entity = self.store.delete_entity(number, self.clock.now())?;
            self.log_entity("entity_deleted", &entity)?;
            Ok(entity)
        })
    }

    /// Recorded so that "what did we just do?" and "add stories to it" can
    /// find the entity; epic and milestone completions are pinned.
    fn log_entity(&self, kind: &str, e: &Entity) -> StoreResult<Operation> {
        self.record(NewOperation {
            kind: kind.into(),
            data: json!({"entity_type": e.kind.name(), "number": e.number, "title": e.title, "parent": e.parent}),
            status: Some(e.status.name().into()),
            ..NewOperation::default()
        })
    }
}
