//! Full-text search and vectors over the tables, computed when asked: BM25
//! as SQLite's FTS5 scores it (k1 1.2, b 0.75, negated), each index
//! holding the rows and columns the SQL backends' indexes hold.

use std::sync::Arc;

use mnemon_core::assemble::retrieve::{Hit, HitSource, SearchStore};
use mnemon_core::assemble::semantic::{StoredVector, VectorStore};
use mnemon_core::engine::ACTION_KIND;
use mnemon_core::memory::{Page, StoreResult, Timestamp};

use super::words::{Terms, tokens};
use super::{InMemoryStore, Keyed, Tables};

/// One row of an index: its key, its columns' tokens, whether retrieval
/// may return it, and the hit it becomes.
struct Indexed {
    key: i64,
    columns: Vec<Vec<String>>,
    shown: bool,
    hit: Hit,
}

fn hit(
    source: HitSource,
    id: String,
    label: &str,
    body: String,
    at: Timestamp,
    importance: f64,
    key: i64,
) -> Hit {
    Hit {
        source,
        id,
        text: source.hit_text(label, body),
        bm25: 0.0,
        at,
        importance,
        row: key,
        role: source.role_of(label),
    }
}

impl Tables {
    /// Every row of `source`'s index, in key order.
    fn index(&self, source: HitSource) -> Vec<Indexed> {
        let row = |key: i64, columns: &[&str], shown: bool, hit: Hit| Indexed {
            key,
            columns: columns.iter().map(|c| tokens(c)).collect(),
            shown,
            hit,
        };
        match source {
            HitSource::Operation => self
                .operations
                .iter()
                .map(|o| {
                    let data = o.data.to_string();
                    let h = hit(
                        source,
                        o.handle(),
                        &o.kind,
                        data.clone(),
                        o.created_at,
                        o.importance,
                        o.seq,
                    );
                    row(o.seq, &[&o.kind, &data], o.kind != ACTION_KIND, h)
                })
                .collect(),
            HitSource::Message => self
                .messages
                .iter()
                .map(|m| {
                    let h = hit(
                        source,
                        m.handle(),
                        m.role.name(),
                        m.content.clone(),
                        m.created_at,
                        m.importance,
                        m.seq,
                    );
                    row(m.seq, &[&m.content], true, h)
                })
                .collect(),
            HitSource::Decision => self
                .decisions
                .iter()
                .map(|d| {
                    let record = serde_json::to_string(&d.row).unwrap_or_default();
                    let h = hit(
                        source,
                        d.id.clone(),
                        &d.title,
                        d.decision.clone(),
                        d.timestamp,
                        1.0,
                        d.key,
                    );
                    row(d.key, &[&d.title, &record], true, h)
                })
                .collect(),
            HitSource::Hot => self
                .hot_items
                .iter()
                .map(|i| {
                    let detail = i.detail.as_deref().unwrap_or_default();
                    let body = match &i.detail {
                        Some(d) => format!("{} — {d}", i.text),
                        None => i.text.clone(),
                    };
                    let live = !matches!(
                        i.status,
                        mnemon_core::memory::HotStatus::Complete
                            | mnemon_core::memory::HotStatus::Removed
                    );
                    let h = hit(
                        source,
                        i.handle(),
                        i.kind.name(),
                        body,
                        i.updated_at,
                        1.0,
                        i.seq as i64,
                    );
                    row(i.seq as i64, &[&i.text, detail], live, h)
                })
                .collect(),
            // A deleted entity leaves the index, as the SQL backends'
            // triggers take it out.
            HitSource::Entity => self
                .entities
                .iter()
                .enumerate()
                .filter(|(_, e)| e.1.is_none())
                .map(|(i, e)| {
                    let e = &e.0;
                    let key = i as i64 + 1;
                    let description = e.description.as_deref().unwrap_or_default();
                    let body = match &e.description {
                        Some(d) => format!("{}: {d} ({})", e.title, e.status.name()),
                        None => format!("{} ({})", e.title, e.status.name()),
                    };
                    let h = hit(
                        source,
                        format!("#{}", e.number),
                        e.kind.name(),
                        body,
                        e.updated_at,
                        0.6,
                        key,
                    );
                    row(key, &[&e.title, description], true, h)
                })
                .collect(),
            HitSource::Document => self
                .documents
                .iter()
                .map(|d| {
                    let current = self
                        .documents
                        .iter()
                        .filter(|x| x.kind == d.kind)
                        .all(|x| x.version <= d.version);
                    let stem = d.kind.stem();
                    let h = hit(
                        source,
                        format!("doc:{stem}"),
                        stem,
                        d.content.clone(),
                        d.created_at,
                        0.6,
                        d.key,
                    );
                    row(d.key, &[&d.content], current, h)
                })
                .collect(),
        }
    }
}

/// FTS5's BM25 of every row of `index` that any term matches, negated: more
/// negative is better.
fn scored(index: &[Indexed], terms: &Terms) -> Vec<(f64, usize)> {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    let n = index.len() as f64;
    let lengths: Vec<f64> = index
        .iter()
        .map(|r| r.columns.iter().map(Vec::len).sum::<usize>() as f64)
        .collect();
    let average = (lengths.iter().sum::<f64>() / n.max(1.0)).max(1.0);
    let counts: Vec<Vec<usize>> = index.iter().map(|r| terms.counts(&r.columns)).collect();
    let idf: Vec<f64> = (0..terms.len())
        .map(|t| {
            let with = counts.iter().filter(|c| c[t] > 0).count() as f64;
            let idf = ((n - with + 0.5) / (with + 0.5)).ln();
            if idf <= 0.0 { 1e-6 } else { idf }
        })
        .collect();
    counts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.iter().any(|n| *n > 0))
        .map(|(i, c)| {
            let norm = K1 * (1.0 - B + B * lengths[i] / average);
            let score: f64 = c
                .iter()
                .zip(&idf)
                .map(|(tf, idf)| {
                    let tf = *tf as f64;
                    idf * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum();
            (-score, i)
        })
        .collect()
}

impl SearchStore for InMemoryStore {
    fn search(&self, query: &str, limit: usize, sources: &[HitSource]) -> StoreResult<Vec<Hit>> {
        let Some(terms) = Terms::any_word(query) else {
            return Ok(Vec::new());
        };
        self.read(|t| {
            let mut hits = Vec::new();
            for source in mnemon_core::assemble::retrieve::ALL_SOURCES
                .into_iter()
                .filter(|s| sources.contains(s))
            {
                let index = t.index(source);
                let mut found = scored(&index, &terms);
                found.sort_by(|a, b| a.0.total_cmp(&b.0));
                hits.extend(
                    found
                        .into_iter()
                        .filter(|(_, i)| index[*i].shown)
                        .take(limit)
                        .map(|(score, i)| Hit {
                            bm25: score,
                            ..index[i].hit.clone()
                        }),
                );
            }
            Ok(hits)
        })
    }

    /// Like an index's posting list, every row that holds the term counts,
    /// shown or not; [`SearchStore::records`] then leaves out the others.
    fn postings(&self, source: HitSource, term: &str, cap: usize) -> StoreResult<Vec<i64>> {
        let Some(terms) = Terms::any_word(term) else {
            return Ok(Vec::new());
        };
        self.read(|t| {
            let mut keys: Vec<i64> = t
                .index(source)
                .into_iter()
                .filter(|r| terms.counts(&r.columns).iter().any(|n| *n > 0))
                .map(|r| r.key)
                .collect();
            keys.sort_by_key(|k| std::cmp::Reverse(*k));
            keys.truncate(cap);
            Ok(keys)
        })
    }

    fn records(&self, source: HitSource, rows: &[i64]) -> StoreResult<Vec<Hit>> {
        self.read(|t| {
            Ok(t.index(source)
                .into_iter()
                .filter(|r| r.shown && rows.contains(&r.key))
                .map(|r| r.hit)
                .collect())
        })
    }

    /// The largest key among the rows kept, deleted entities included (they
    /// keep their row), as the SQL backends read `max(key)`.
    fn last_row(&self, source: HitSource) -> StoreResult<u64> {
        self.read(|t| {
            let last = match source {
                HitSource::Operation => t.operations.iter().map(|o| o.seq).max(),
                HitSource::Message => t.messages.iter().map(|m| m.seq).max(),
                HitSource::Decision => t.decisions.iter().map(|d| d.key).max(),
                HitSource::Hot => t.hot_items.iter().map(|h| h.seq as i64).max(),
                HitSource::Entity => Some(t.entities.len() as i64),
                HitSource::Document => t.documents.iter().map(|d| d.key).max(),
            };
            Ok(last.unwrap_or(0).max(0) as u64)
        })
    }
}

impl Tables {
    /// The keys of `source`'s records that retrieval can return, in order.
    fn shown_keys(&self, source: HitSource) -> Vec<i64> {
        match source {
            HitSource::Operation => self
                .operations
                .iter()
                .filter(|o| o.kind != ACTION_KIND)
                .map(|o| o.seq)
                .collect(),
            HitSource::Message => self.messages.iter().map(|m| m.seq).collect(),
            _ => Vec::new(),
        }
    }

    fn has_vector(&self, model: &str, source: HitSource, row: i64) -> bool {
        self.vectors
            .iter()
            .any(|v| v.0 == model && v.1.source == source && v.1.row == row)
    }

    /// Removes the vectors of one record, of every model.
    pub(super) fn drop_vectors(&mut self, source: HitSource, row: i64) {
        self.vectors
            .retain(|v| !(v.1.source == source && v.1.row == row));
    }
}

impl VectorStore for InMemoryStore {
    fn put_vectors(&self, model: &str, vectors: &[StoredVector]) -> StoreResult<()> {
        self.write(|t| {
            for v in vectors {
                v.source.vector_name()?;
                t.vectors.retain(|x| {
                    !(x.0 == model
                        && x.1.source == v.source
                        && x.1.row == v.row
                        && x.1.chunk == v.chunk)
                });
                t.last_vector += 1;
                t.vectors.push(Arc::new(Keyed {
                    key: t.last_vector,
                    row: (model.to_string(), v.clone()),
                }));
            }
            Ok(())
        })
    }

    fn vectors_since(&self, model: &str, page: Page) -> StoreResult<Vec<(i64, StoredVector)>> {
        let Page { after, limit } = page;
        self.read(|t| {
            Ok(t.vectors
                .iter()
                .filter(|v| v.key > after && v.0 == model)
                .take(limit)
                .map(|v| (v.key, v.1.clone()))
                .collect())
        })
    }

    fn unembedded(&self, model: &str, source: HitSource, page: Page) -> StoreResult<Vec<i64>> {
        let Page { after, limit } = page;
        source.vector_name()?;
        self.read(|t| {
            Ok(t.shown_keys(source)
                .into_iter()
                .filter(|k| *k > after && !t.has_vector(model, source, *k))
                .take(limit)
                .collect())
        })
    }

    fn unembedded_count(&self, model: &str, source: HitSource) -> StoreResult<u64> {
        source.vector_name()?;
        self.read(|t| {
            Ok(t.shown_keys(source)
                .into_iter()
                .filter(|k| !t.has_vector(model, source, *k))
                .count() as u64)
        })
    }
}
