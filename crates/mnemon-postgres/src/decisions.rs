//! Decision records: the full record as JSON, with its status and
//! supersession as columns so lifecycle changes are checked in SQL.

use mnemon_core::memory::{DecisionRecord, DecisionStore, StatusWrite, StoreResult, decision_id};
use mnemon_core::store::sql;

use crate::client::Db;
use crate::text::words;
use crate::{PgStore, new_id, resolve_id};

fn read(db: &Db, project: &str, id: &str) -> StoreResult<DecisionRecord> {
    let full = resolve_id(
        db,
        "decisions",
        "decision record",
        project,
        &decision_id(id),
    )?;
    let r = db.one(
        "SELECT record, status, superseded_by FROM decisions WHERE id = $1",
        &[&full],
    )?;
    DecisionRecord::from_stored(&r.get::<_, String>(0), &r.get::<_, String>(1), r.get(2))
}

impl PgStore {
    fn insert_decision_in(&self, db: &Db, draft: &DecisionRecord) -> StoreResult<DecisionRecord> {
        // A taken id inserts nothing (a failed statement would abort the
        // transaction), and core draws again.
        sql::insert_drawn_decision(draft, new_id, |r, json| {
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
            Ok(n == 1)
        })
    }
}

impl DecisionStore for PgStore {
    fn insert_decision(&self, draft: &DecisionRecord) -> StoreResult<DecisionRecord> {
        self.write(|db| self.insert_decision_in(db, draft))
    }

    fn decision(&self, id: &str) -> StoreResult<DecisionRecord> {
        read(&self.db()?, self.project(), id)
    }

    fn decisions(&self, limit: Option<usize>) -> StoreResult<Vec<DecisionRecord>> {
        let rows = self.db()?.query(
            "SELECT record, status, superseded_by FROM decisions WHERE project_id = $1 ORDER BY seq DESC LIMIT $2",
            &[&self.project(), &crate::limit(limit)],
        )?;
        rows.iter()
            .map(|r| {
                DecisionRecord::from_stored(
                    &r.get::<_, String>(0),
                    &r.get::<_, String>(1),
                    r.get(2),
                )
            })
            .collect()
    }

    fn write_decision_status(&self, w: &StatusWrite<'_>) -> StoreResult<()> {
        self.write(|db| {
            db.exec(
                "UPDATE decisions SET status = $2, superseded_by = coalesce($3, superseded_by) WHERE id = $1",
                &[&w.id, &w.status.name(), &w.superseded_by],
            )
        })?;
        Ok(())
    }
}
