//! Forgetting, as every backend must do it: what is named goes with what
//! follows it (the log lines of a hot item or a decision, a session's
//! records), search finds none of it, summaries and checkpoints lose what
//! came from it and still verify, and a bad target forgets nothing.

use mnemon_core::assemble::retrieve::{ALL_SOURCES, HitSource, SearchStore};
use mnemon_core::assemble::semantic::{Quantized, StoredVector};
use mnemon_core::engine::forget::{ForgetTarget, Forgotten};
use mnemon_core::engine::{Checkpoint, EngineStore};
use mnemon_core::memory::{
    DecisionStore, HotKind, HotStore, NewDecision, NewOperation, OperationLog, OperationQuery,
    Page, SessionStore, StoreError,
};
use serde_json::json;

use crate::Backend;
use crate::{SteppingClock, T0, engine};

fn found<S: SearchStore>(s: &S, word: &str) -> usize {
    s.search(word, 50, &ALL_SOURCES).unwrap().len()
}

const MODEL: &str = "conformance-model";

/// A vector for every operation and message the log holds now.
fn vectors_for_every_record<S: EngineStore + SearchStore>(s: &S) {
    let (ops, msgs) = s.log_heads().unwrap();
    let mut vectors = Vec::new();
    for (source, last) in [(HitSource::Operation, ops), (HitSource::Message, msgs)] {
        for row in s
            .unembedded(
                MODEL,
                source,
                Page {
                    after: 0,
                    limit: last as usize,
                },
            )
            .unwrap()
        {
            vectors.push(StoredVector {
                source,
                row,
                chunk: 0,
                vector: Quantized::of(&[1.0, 0.5, row as f32]),
            });
        }
    }
    assert!(!vectors.is_empty());
    s.put_vectors(MODEL, &vectors).unwrap();
}

/// The records that have a stored vector.
fn vectored<S: SearchStore>(s: &S) -> Vec<(HitSource, i64)> {
    s.vectors_since(
        MODEL,
        Page {
            after: 0,
            limit: 10_000,
        },
    )
    .unwrap()
    .into_iter()
    .map(|(_, v)| (v.source, v.row))
    .collect()
}

/// A note, a decision and a message about "kestrel", copied into a
/// compaction and a checkpoint, are forgotten; the rest stays.
pub fn forgetting_leaves_no_trace<B: Backend>(b: &B) {
    let e = engine(b.fresh(), 8_192, SteppingClock::starting(T0), "forgetful");
    let m = e.memory();
    let note = m
        .add_hot(
            HotKind::Note,
            "the kestrel vault code is 7421",
            None,
            None,
            None,
        )
        .unwrap();
    let d = m
        .decide(&NewDecision {
            title: "Move kestrel to the east cluster".into(),
            context: "kestrel needs more memory".into(),
            decision: "kestrel moves east in May".into(),
            consequences: Default::default(),
            alternatives: Vec::new(),
            assumptions: Vec::new(),
            status: mnemon_core::memory::DecisionStatus::Accepted,
        })
        .unwrap();
    let said = m
        .message(mnemon_core::memory::NewMessage::new(
            mnemon_core::importance::Role::User,
            "remember that the kestrel vault code is 7421",
        ))
        .unwrap();
    for i in 0..6 {
        e.record(NewOperation {
            kind: "note".into(),
            data: json!({"text": format!("the heron build number {i} passed")}),
            ..NewOperation::default()
        })
        .unwrap();
    }
    e.compact(false).unwrap();
    let cp = e.checkpoint("manual").unwrap();
    let s = m.store();
    vectors_for_every_record(s);
    assert!(
        found(s, "kestrel") >= 4,
        "before: the note, its log line, the decision, the message"
    );
    let ops_before = s.count_operations(&OperationQuery::default()).unwrap();

    // A bad target among good ones: nothing goes.
    let bad = e.forget(
        &[
            ForgetTarget::Id(note.id.clone()),
            ForgetTarget::OperationAt(999_999),
        ],
        false,
    );
    assert!(
        matches!(
            bad,
            Err(mnemon_core::engine::EngineError::Store(
                StoreError::NotFound { .. }
            ))
        ),
        "{bad:?}"
    );
    assert_eq!(
        s.count_operations(&OperationQuery::default()).unwrap(),
        ops_before
    );

    // A dry run reports and changes nothing.
    let targets = [
        ForgetTarget::Id(note.id.clone()),
        ForgetTarget::Decision(d.id.clone()),
        ForgetTarget::MessageAt(said.seq),
    ];
    let dry = e.forget(&targets, true).unwrap();
    assert!(dry.dry_run && dry.hot_items.len() == 2, "{dry:?}");
    assert!(found(s, "kestrel") >= 4);
    assert!(
        e.forgettings(10).unwrap().is_empty(),
        "a dry run is not audited"
    );

    let f: Forgotten = e.forget(&targets, false).unwrap();
    assert_eq!(
        f.hot_items.len(),
        2,
        "the note and the decision's key decision: {f:?}"
    );
    assert_eq!(f.decisions, vec![d.id.clone()]);
    assert_eq!(f.messages, vec![said.seq]);
    assert_eq!(
        f.operations.len(),
        3,
        "the log lines of the note, the decision and its hot item: {f:?}"
    );
    assert_eq!(found(s, "kestrel"), 0, "search finds nothing forgotten");
    let kept = vectored(s);
    assert!(
        !kept.contains(&(HitSource::Message, said.seq)),
        "a forgotten message's vector goes with it"
    );
    for seq in &f.operations {
        assert!(
            !kept.contains(&(HitSource::Operation, *seq)),
            "a forgotten operation's vector goes with it"
        );
    }
    assert!(
        kept.iter()
            .any(|(source, _)| *source == HitSource::Operation),
        "the vectors of what stays, stay"
    );
    assert!(matches!(
        s.hot_item(&note.id),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        s.decision(&d.id),
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(
        s.count_operations(&OperationQuery::default()).unwrap(),
        ops_before - 3
    );
    assert_eq!(found(s, "heron"), 6, "what was not named stays");

    // Summaries and checkpoints lost what came from it, nothing else.
    for c in s.compactions(100).unwrap() {
        assert!(!c.summary.contains("kestrel"), "{}", c.summary);
        assert!(!c.audit.to_string().contains(&format!("\"m{}\"", said.seq)));
    }
    let stored = s.checkpoint(&cp.id).unwrap();
    assert!(!stored.json.contains("kestrel"), "{}", stored.json);
    let reread = Checkpoint::from_json(&stored.json, &cp.id).expect("sealed again");
    let snap = reread.snapshot();
    assert!(!snap.messages.contains(&said.seq));
    assert!(snap.hot_context.items.iter().all(|(id, _)| *id != note.id));
    e.resume(&reread).unwrap();
    assert_eq!(found(s, "kestrel"), 0);

    // The audit: ids and counts, no content.
    let audit = e.forgettings(10).unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!((audit[0].hot_items, audit[0].operations), (2, 3));
    assert!(!serde_json::to_string(&audit).unwrap().contains("kestrel"));

    // A whole session, once ended.
    let session = s.active_session("forgetful").unwrap().unwrap();
    let active = e.forget(&[ForgetTarget::Id(session.id.clone())], false);
    assert!(
        matches!(
            active,
            Err(mnemon_core::engine::EngineError::Store(
                StoreError::Invalid(_)
            ))
        ),
        "{active:?}"
    );
    e.end_session().unwrap();
    let gone = e
        .forget(&[ForgetTarget::Id(session.id.clone())], false)
        .unwrap();
    assert_eq!(gone.sessions, vec![session.id.clone()]);
    assert_eq!(found(s, "heron"), 0);
    assert!(matches!(
        s.session(&session.id),
        Err(StoreError::NotFound { .. })
    ));
    assert!(
        s.checkpoints(100)
            .unwrap()
            .iter()
            .all(|c| c.session_id.as_deref() != Some(&session.id))
    );
    // A phrase, wherever it is held; ASCII case does not matter.
    let said = m
        .message(mnemon_core::memory::NewMessage::new(
            mnemon_core::importance::Role::User,
            "the Puffin Colony moves in June",
        ))
        .unwrap();
    m.record(NewOperation {
        kind: "note".into(),
        data: json!({"where": {"text": "PUFFIN COLONY at the north cliff"}}),
        ..NewOperation::default()
    })
    .unwrap();
    m.add_hot(
        HotKind::Constraint,
        "Never disturb the puffin colony",
        None,
        None,
        None,
    )
    .unwrap();
    m.add_hot(
        HotKind::Constraint,
        "Puffins are counted in May",
        None,
        None,
        None,
    )
    .unwrap();
    let p = e
        .forget(&[ForgetTarget::matching("puffin colony").unwrap()], false)
        .unwrap();
    assert_eq!(p.messages, vec![said.seq]);
    assert_eq!((p.hot_items.len(), p.operations.len()), (1, 2), "{p:?}");
    assert_eq!(found(s, "colony"), 0);
    assert_eq!(
        found(s, "counted"),
        2,
        "a text without the phrase stays, with its log line"
    );
    let audit = serde_json::to_string(&e.forgettings(1).unwrap()).unwrap();
    assert!(!audit.to_lowercase().contains("puffin"), "{audit}");

    // The project goes on.
    e.record(NewOperation {
        kind: "note".into(),
        data: json!({"text": "after forgetting"}),
        ..NewOperation::default()
    })
    .unwrap();
    assert_eq!(found(s, "forgetting"), 1);
}
