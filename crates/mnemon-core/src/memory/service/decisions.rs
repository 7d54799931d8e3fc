//! Decision records through the memory rules: validated, logged and rendered
//! in one unit of work.

use super::Memory;
use crate::memory::{
    Atomically, DecisionRecord, DecisionStatus, HotItemChange, HotKind, HotStatus, NewDecision,
    NewOperation, StatusWrite, Store, StoreError, StoreResult,
};

impl<S: Store + ?Sized> Memory<S> {
    fn decision_draft(&self, d: &NewDecision) -> StoreResult<DecisionRecord> {
        d.validate()
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        // Every text of the record, redacted: the record round-trips
        // through JSON so no field is missed.
        let d: NewDecision = serde_json::to_value(d)
            .ok()
            .map(|v| self.clean_data(&v, true))
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_else(|| d.clone());
        let d = &d;
        Ok(DecisionRecord {
            id: String::new(),
            timestamp: self.clock.now(),
            title: d.title.trim().to_string(),
            context: d.context.trim().to_string(),
            decision: d.decision.trim().to_string(),
            consequences: d.consequences.clone(),
            alternatives: d.alternatives.clone(),
            assumptions: d.assumptions.clone(),
            status: d.status,
            superseded_by: None,
            agent: self.agent.clone(),
        })
    }

    /// Records a decision: the ADR in the store, a pinned `decision`
    /// operation carrying its compact JSON, and a key decision in the hot
    /// context, all in one unit of work.
    pub fn decide(&self, d: &NewDecision) -> StoreResult<DecisionRecord> {
        let draft = self.decision_draft(d)?;
        self.store.atomically(|| {
            let record = self.store.insert_decision(&draft)?;
            self.after_decision(&record)?;
            Ok(record)
        })
    }

    /// Replaces `old` with a new decision. Both records, the new decision's
    /// operation and hot item, and the old one's removal from the hot
    /// context commit together.
    pub fn supersede(
        &self,
        old: &str,
        d: &NewDecision,
    ) -> StoreResult<(DecisionRecord, DecisionRecord)> {
        let draft = self.decision_draft(d)?;
        self.store.atomically(|| self.supersede_now(old, &draft))
    }

    fn supersede_now(
        &self,
        old: &str,
        draft: &DecisionRecord,
    ) -> StoreResult<(DecisionRecord, DecisionRecord)> {
        let new = self.store.insert_decision(draft)?;
        let old = self.change_status(old, DecisionStatus::Superseded, Some(&new.id))?;
        self.after_decision(&new)?;
        // The replaced decision leaves the hot context; its record stays.
        let stale: Vec<_> = self
            .store
            .hot_context()?
            .of_kind(HotKind::Decision)
            .filter(|h| h.text.contains(&old.id))
            .map(|h| (h.id.clone(), h.version))
            .collect();
        for (id, version) in stale {
            self.update_hot(
                &id,
                version,
                HotItemChange {
                    status: Some(HotStatus::Removed),
                    ..HotItemChange::default()
                },
            )?;
        }
        Ok((old, new))
    }

    pub fn set_decision_status(
        &self,
        id: &str,
        status: DecisionStatus,
    ) -> StoreResult<DecisionRecord> {
        self.store
            .atomically(|| self.change_status(id, status, None))
    }

    /// Reads the decision, checks the lifecycle allows the change, writes it
    /// and reads the record back, inside the caller's unit of work.
    fn change_status(
        &self,
        id: &str,
        status: DecisionStatus,
        superseded_by: Option<&str>,
    ) -> StoreResult<DecisionRecord> {
        let current = self.store.decision(id)?;
        current.check_change(status)?;
        self.store.write_decision_status(&StatusWrite {
            id: &current.id,
            status,
            superseded_by,
        })?;
        self.store.decision(&current.id)
    }

    fn after_decision(&self, r: &DecisionRecord) -> StoreResult<()> {
        self.record(NewOperation {
            kind: "decision".into(),
            data: r.to_compact_json(),
            status: Some(r.status.name().to_ascii_lowercase()),
            ..NewOperation::default()
        })?;
        let rationale = r
            .consequences
            .positive
            .first()
            .cloned()
            .unwrap_or_else(|| r.context.clone());
        self.add_hot(
            HotKind::Decision,
            &format!("{} ({})", r.decision, r.id),
            Some(&rationale),
            None,
            None,
        )?;
        Ok(())
    }
}
