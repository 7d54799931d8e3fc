//! Stored vectors: read back in the order stored, a
//! replaced vector read again as new, records without one found with the
//! filter retrieval uses, and the engine's own records never asked for.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::assemble::retrieve::HitSource;
use mnemon_core::assemble::semantic::{
    Backlog, EmbedError, Embedder, Quantized, StoredVector, VectorIndex, VectorStore, backfill,
};
use mnemon_core::engine::Engine;
use mnemon_core::importance::Role;
use mnemon_core::memory::{NewMessage, NewOperation, Page};
use serde_json::json;

fn fresh() -> Engine<InMemoryStore> {
    engine(
        InMemoryStore::new(),
        1_000_000,
        SteppingClock::starting(T0),
        "vectors",
    )
}

fn vector(source: HitSource, row: i64, chunk: u32, x: f32) -> StoredVector {
    StoredVector {
        source,
        row,
        chunk,
        vector: Quantized::of(&[x, 1.0 - x, 0.5]),
    }
}

/// Counts letters by kind: a stand-in model that is deterministic and
/// cheap, so these tests are about storage (the real model is tested in
/// mnemon-embed and through the CLI).
struct Letters;

impl Embedder for Letters {
    fn model(&self) -> &str {
        "letters"
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; 26];
                for c in t.to_lowercase().chars().filter(char::is_ascii_lowercase) {
                    v[(c as u8 - b'a') as usize] += 1.0;
                }
                v[0] += 0.01;
                v
            })
            .collect())
    }
}

#[test]
fn vectors_are_read_since_a_position_and_a_replacement_reads_as_new() {
    let e = fresh();
    let s = e.memory().store();
    s.put_vectors(
        "m",
        &[
            vector(HitSource::Message, 1, 0, 0.1),
            vector(HitSource::Message, 1, 1, 0.2),
            vector(HitSource::Operation, 4, 0, 0.3),
        ],
    )
    .unwrap();
    s.put_vectors("other", &[vector(HitSource::Message, 1, 0, 0.9)])
        .unwrap();
    let all = s
        .vectors_since(
            "m",
            Page {
                after: 0,
                limit: 100,
            },
        )
        .unwrap();
    assert_eq!(all.len(), 3, "another model's vectors are apart");
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0), "in stored order");
    assert_eq!(all[2].1, vector(HitSource::Operation, 4, 0, 0.3));
    let seen = all[2].0;
    assert!(
        s.vectors_since(
            "m",
            Page {
                after: seen,
                limit: 100
            }
        )
        .unwrap()
        .is_empty()
    );
    s.put_vectors("m", &[vector(HitSource::Message, 1, 0, 0.7)])
        .unwrap();
    let new = s
        .vectors_since(
            "m",
            Page {
                after: seen,
                limit: 100,
            },
        )
        .unwrap();
    assert_eq!(new.len(), 1);
    assert_eq!(new[0].1, vector(HitSource::Message, 1, 0, 0.7));
    assert_eq!(
        s.vectors_since("m", Page { after: 0, limit: 2 })
            .unwrap()
            .len(),
        2,
        "limit"
    );
    let err = s
        .put_vectors("m", &[vector(HitSource::Decision, 1, 0, 0.1)])
        .unwrap_err();
    assert!(err.to_string().contains("operations and messages"), "{err}");
}

#[test]
fn backfill_embeds_what_retrieval_can_show_once() {
    let e = fresh();
    let m = e.memory();
    for i in 0..5 {
        m.record(NewOperation {
            kind: "note".into(),
            data: json!({ "text": format!("note {i}") }),
            ..NewOperation::default()
        })
        .unwrap();
    }
    // The engine's own record is never offered for embedding.
    m.record(NewOperation {
        kind: "context_action".into(),
        data: json!({ "text": "internal" }),
        ..NewOperation::default()
    })
    .unwrap();
    let long = "A sentence about the schema migration and its rollback plan. ".repeat(30);
    m.message(NewMessage {
        role: Role::User,
        content: long,
        agent: None,
        tokens: None,
    })
    .unwrap();
    let s = m.store();
    assert_eq!(
        s.unembedded_count("letters", HitSource::Operation).unwrap(),
        5
    );
    assert_eq!(
        s.unembedded_count("letters", HitSource::Message).unwrap(),
        1
    );
    let mut heard = Vec::new();
    let n = backfill(s, &Letters, Backlog::All, &mut |d| heard.push(d)).unwrap();
    assert_eq!(n, 6);
    assert_eq!(heard.last(), Some(&6));
    for source in [HitSource::Operation, HitSource::Message] {
        assert_eq!(s.unembedded_count("letters", source).unwrap(), 0);
    }
    let stored = s
        .vectors_since(
            "letters",
            Page {
                after: 0,
                limit: 1_000,
            },
        )
        .unwrap();
    let chunks = stored
        .iter()
        .filter(|v| v.1.source == HitSource::Message)
        .count();
    assert!(chunks > 1, "a long message is embedded in chunks: {chunks}");
    assert_eq!(backfill(s, &Letters, Backlog::All, &mut |_| {}).unwrap(), 0);

    // Only the newest are looked at before a query.
    for i in 0..10 {
        m.record(NewOperation {
            kind: "note".into(),
            data: json!({ "text": format!("later {i}") }),
            ..NewOperation::default()
        })
        .unwrap();
    }
    assert_eq!(
        backfill(s, &Letters, Backlog::Newest(4), &mut |_| {}).unwrap(),
        4
    );
    assert_eq!(
        s.unembedded_count("letters", HitSource::Operation).unwrap(),
        6
    );

    // The index finds a record by its best chunk and sees new vectors.
    let index = VectorIndex::default();
    let q = Letters.embed_query("note 3").unwrap();
    let near = index
        .nearest(s, "letters", &q, 3, &mnemon_core::runtime::InOrder)
        .unwrap();
    assert_eq!(near.len(), 3);
    backfill(s, &Letters, Backlog::All, &mut |_| {}).unwrap();
    let more = index
        .nearest(s, "letters", &q, 100, &mnemon_core::runtime::InOrder)
        .unwrap();
    // 15 notes and the message, each once; not the engine's own record.
    assert_eq!(more.len(), 16, "{more:?}");
}

/// A conversation of short turns, larger than the budget: a rare word in
/// three of them, a common one in all.
fn short_turns() -> Engine<InMemoryStore> {
    let e = fresh();
    for i in 0..1_500 {
        let (role, who) = if i % 2 == 0 {
            (Role::User, "Ana")
        } else {
            (Role::Assistant, "Ben")
        };
        let content = match i % 500 {
            7 => format!("{who}: the zebra import failed at step {i}"),
            _ => format!("{who}: the build failed at step {i}"),
        };
        e.message(NewMessage {
            role,
            content,
            agent: None,
            tokens: None,
        })
        .unwrap();
    }
    e
}

fn fragments(e: &Engine<InMemoryStore>, budget: u64) -> mnemon_core::assemble::Assembled {
    mnemon_conformance::qa_context(e, "why did the zebra import fail", budget)
}

/// The fragments a budget asks for are those of records of average length;
/// turns of a line hold fewer tokens, and the next best are fetched until
/// the budget is full: with meaning on, the model's nearest records; by
/// words alone, those that share only the question's common words, after
/// the three that match its rare one.
#[test]
fn a_budget_is_filled_however_short_the_turns() {
    let budget = 8_000;
    let words = short_turns();
    let out = fragments(&words, budget);
    let parts: Vec<(&str, u64, usize, usize)> = out
        .sections
        .iter()
        .map(|s| (s.kind.name(), s.tokens, s.items.len(), s.left_out))
        .collect();
    assert!(
        out.tokens > budget * 9 / 10,
        "{} of {budget}: {parts:?}",
        out.tokens
    );
    assert!(out.text.contains("zebra import failed at step 7\n"));
    assert!(out.text.contains("zebra import failed at step 1007\n"));

    let meaning = short_turns().with_embedder(
        std::sync::Arc::new(Letters),
        std::sync::Arc::new(VectorIndex::default()),
    );
    backfill(
        meaning.memory().store(),
        &Letters,
        Backlog::All,
        &mut |_| {},
    )
    .unwrap();
    let out = fragments(&meaning, budget);
    assert!(out.tokens > budget * 9 / 10, "{} of {budget}", out.tokens);
    assert!(out.text.contains("zebra import failed at step 507\n"));
}

/// [`Letters`], noting every question it is asked to embed.
#[derive(Default)]
struct Asked(std::sync::Mutex<Vec<String>>);

impl Embedder for Asked {
    fn model(&self) -> &str {
        "letters"
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Letters.embed(texts)
    }
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        self.0.lock().unwrap().push(query.to_string());
        Ok(Letters.embed(&[query])?.remove(0))
    }
}

/// The speakers' names are left out of the question's vector, since every
/// turn is said by one of them; the words' ranking still reads them.
#[test]
fn a_question_is_embedded_without_the_speakers_names() {
    let asked = std::sync::Arc::new(Asked::default());
    let e = short_turns().with_embedder(asked.clone(), std::sync::Arc::new(VectorIndex::default()));
    backfill(e.memory().store(), &Letters, Backlog::All, &mut |_| {}).unwrap();
    for (question, embedded) in [
        (
            "Why did Ana's zebra import fail?",
            "Why did zebra import fail?",
        ),
        ("What did Ana and Ben build?", "What did and build?"),
        (
            "why did the zebra import fail",
            "why did the zebra import fail",
        ),
        ("What did Carla say?", "What did Carla say?"),
        ("Ana, Ben?", "Ana, Ben?"),
    ] {
        let out = mnemon_conformance::qa_context(&e, question, 2_000);
        assert!(out.tokens > 0, "{question}");
        let last = asked.0.lock().unwrap().pop();
        assert_eq!(last.as_deref(), Some(embedded), "{question}");
    }
    let out = mnemon_conformance::qa_context(&e, "Why did Ana's zebra import fail?", 2_000);
    assert!(out.text.contains("zebra import failed at step 7\n"));
}
