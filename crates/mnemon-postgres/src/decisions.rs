//! Decision records: the full record as JSON, with its status and
//! supersession as columns so lifecycle changes are checked in SQL.

use mnemon_core::memory::{DecisionRecord, DecisionStatus, DecisionStore, StoreError};

use crate::client::Db;
use crate::text::words;
use crate::{PgStore, resolve_id};

fn from_json(
    record: &str,
    status: &str,
    superseded_by: Option<String>,
) -> Result<DecisionRecord, StoreError> {
    let mut r: DecisionRecord = serde_json::from_str(record).map_err(|e| {
        StoreError::Backend(format!("a stored decision record does not parse: {e}"))
    })?;
    r.status = status.parse().map_err(StoreError::Backend)?;
    r.superseded_by = superseded_by;
    Ok(r)
}

fn read(db: &Db, project: &str, id: &str) -> Result<DecisionRecord, StoreError> {
    let wanted = if id.starts_with("DR-") {
        id.to_string()
    } else {
        format!("DR-{id}")
    };
    let full = resolve_id(db, "decisions", "decision record", project, &wanted)?;
    let r = db.one(
        "SELECT record, status, superseded_by FROM decisions WHERE id = $1",
        &[&full],
    )?;
    from_json(&r.get::<_, String>(0), &r.get::<_, String>(1), r.get(2))
}

/// `DR-` and the last eight hex digits of a fresh UUIDv7 (its random part).
fn new_decision_id() -> String {
    let u = uuid::Uuid::now_v7().simple().to_string();
    format!("DR-{}", &u[u.len() - 8..])
}

impl PgStore {
    fn insert_decision_in(
        &self,
        db: &Db,
        draft: &DecisionRecord,
    ) -> Result<DecisionRecord, StoreError> {
        // Eight hex digits can collide: a taken id inserts nothing, and we
        // draw again (a failed statement would abort the transaction).
        for _ in 0..8 {
            let mut r = draft.clone();
            r.id = new_decision_id();
            let json = serde_json::to_string(&r).map_err(|e| StoreError::Invalid(e.to_string()))?;
            let indexed = words(&format!("{} {json}", r.title));
            let n = db.exec(
                "INSERT INTO decisions (id, project_id, title, record, status, superseded_by, agent, created_at, tsv)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, strip(to_tsvector('simple', $9))) ON CONFLICT (id) DO NOTHING",
                &[
                    &r.id,
                    &self.project(),
                    &r.title,
                    &json,
                    &r.status.name(),
                    &r.superseded_by,
                    &r.agent,
                    &r.timestamp.0,
                    &indexed,
                ],
            )?;
            if n == 1 {
                return Ok(r);
            }
        }
        Err(StoreError::Backend(
            "could not draw a unique decision id".into(),
        ))
    }

    fn set_status(
        &self,
        db: &Db,
        id: &str,
        status: DecisionStatus,
        superseded_by: Option<&str>,
    ) -> Result<DecisionRecord, StoreError> {
        let current = read(db, self.project(), id)?;
        if !current.status.can_become(status) {
            return Err(StoreError::Invalid(format!(
                "{} is {}; a {} decision cannot become {status}",
                current.id, current.status, current.status
            )));
        }
        db.exec(
            "UPDATE decisions SET status = $2, superseded_by = coalesce($3, superseded_by) WHERE id = $1",
            &[&current.id, &status.name(), &superseded_by],
        )?;
        read(db, self.project(), &current.id)
    }
}

impl DecisionStore for PgStore {
    fn insert_decision(&self, draft: &DecisionRecord) -> Result<DecisionRecord, StoreError> {
        self.write(|db| self.insert_decision_in(db, draft))
    }

    fn decision(&self, id: &str) -> Result<DecisionRecord, StoreError> {
        read(&self.db()?, self.project(), id)
    }

    fn decisions(&self, limit: Option<usize>) -> Result<Vec<DecisionRecord>, StoreError> {
        let rows = self.db()?.query(
            "SELECT record, status, superseded_by FROM decisions WHERE project_id = $1 ORDER BY seq DESC LIMIT $2",
            &[&self.project(), &crate::limit(limit)],
        )?;
        rows.iter()
            .map(|r| from_json(&r.get::<_, String>(0), &r.get::<_, String>(1), r.get(2)))
            .collect()
    }

    fn set_decision_status(
        &self,
        id: &str,
        status: DecisionStatus,
    ) -> Result<DecisionRecord, StoreError> {
        self.write(|db| self.set_status(db, id, status, None))
    }

    fn supersede_decision(
        &self,
        old: &str,
        replacement: &DecisionRecord,
    ) -> Result<(DecisionRecord, DecisionRecord), StoreError> {
        self.write(|db| {
            let new = self.insert_decision_in(db, replacement)?;
            let old = self.set_status(db, old, DecisionStatus::Superseded, Some(&new.id))?;
            Ok((old, new))
        })
    }
}
