//! Conformance: the logs (operations, messages, queries and search, sessions,
//! working memory) as every store must keep them.

use serde_json::json;

use mnemon_core::importance::Role;
use mnemon_core::memory::{
    MessageQuery, NewMessage, NewOperation, OperationQuery, Phase, SessionStatus, Store,
    StoreError, WorkingMemory,
};
use mnemon_core::tokens::{Encoding, OpenAiBpe, TokenCounter};

use crate::memory;

pub fn operations_round_trip<S: Store>(fresh: &dyn Fn() -> S) {
    let m = memory(fresh(), "orchestrator");
    let data = json!({"intent": "CREATE", "entity_type": "epic", "title": "User Authentication", "reasoning": "secret"});
    let op = m
        .record(NewOperation {
            kind: "nl_command".into(),
            data: data.clone(),
            phase: Some(Phase::Planning),
            status: Some("completed".into()),
            ..NewOperation::default()
        })
        .unwrap();
    assert_eq!(op.kind, "nl_command");
    assert_eq!(
        op.data.get("reasoning"),
        None,
        "raw reasoning is never stored"
    );
    assert_eq!(op.data["title"], "User Authentication");
    let expected =
        OpenAiBpe::new(Encoding::Cl100kBase).count(&format!("nl_command {}", op.data)) as u64;
    assert_eq!(
        op.tokens, expected,
        "tokens are counted with the project's tokenizer"
    );
    assert!(op.pinned, "an epic completion is pinned");
    assert!((0.0..=1.0).contains(&op.importance));
    let back = m.store().operation(&op.id).unwrap();
    assert_eq!(back, op, "what is read is what was written");
    assert_eq!(
        m.store().operation(&op.id[..13]).unwrap().id,
        op.id,
        "a unique id prefix finds it"
    );
    let given = m
        .record(NewOperation {
            kind: "validation".into(),
            tokens: Some(42),
            ..NewOperation::default()
        })
        .unwrap();
    assert_eq!(given.tokens, 42, "given token counts are kept");
    assert!(given.seq > op.seq, "positions increase");
    assert!(matches!(
        m.record(NewOperation::default()),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        m.store().operation("nope"),
        Err(StoreError::NotFound { .. })
    ));
}

pub fn messages_round_trip<S: Store>(fresh: &dyn Fn() -> S) {
    let m = memory(fresh(), "orchestrator");
    let user = m
        .message(NewMessage {
            role: Role::User,
            content: "Remember this: tokens expire after 1 hour".into(),
            agent: None,
            tokens: None,
        })
        .unwrap();
    assert_eq!(user.importance, 1.0);
    assert!(user.pinned);
    let asst = m
        .message(NewMessage {
            role: Role::Assistant,
            content: "<think>hmm</think>Done, see `jwt.rs`.".into(),
            agent: Some("quaid".into()),
            tokens: None,
        })
        .unwrap();
    assert_eq!(asst.content, "Done, see `jwt.rs`.");
    assert_eq!(asst.agent, "quaid");
    assert!((asst.importance - 0.5).abs() < 1e-9);
    let all = m.recent_messages(&MessageQuery::default()).unwrap();
    assert_eq!(
        all.iter().map(|x| &x.id).collect::<Vec<_>>(),
        vec![&asst.id, &user.id],
        "most recent first"
    );
    assert!(
        m.message(NewMessage {
            role: Role::User,
            content: "<think>only this</think>".into(),
            agent: None,
            tokens: None
        })
        .is_err()
    );
}

pub fn queries_filter_and_search<S: Store>(fresh: &dyn Fn() -> S) {
    let m = memory(fresh(), "orchestrator");
    for (kind, text) in [
        ("nl_command", "Create an epic for user authentication"),
        ("task_execution", "Implement password hashing with bcrypt"),
        ("validation", "Quality score 0.87 for task 15"),
        ("nl_command", "Add 3 stories to it: login, signup, and MFA"),
    ] {
        m.record(NewOperation {
            kind: kind.into(),
            data: json!({"input": text}),
            ..NewOperation::default()
        })
        .unwrap();
    }
    let cmds = m
        .recent(&OperationQuery {
            kind: Some("nl_command".into()),
            ..OperationQuery::default()
        })
        .unwrap();
    assert_eq!(cmds.len(), 2);
    assert!(cmds[0].seq > cmds[1].seq);
    let hits = m
        .recent(&OperationQuery {
            keywords: Some("bcrypt password".into()),
            ..OperationQuery::default()
        })
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].kind, "task_execution");
    let none = m
        .recent(&OperationQuery {
            keywords: Some("\"(*) OR".into()),
            ..OperationQuery::default()
        })
        .unwrap();
    assert!(none.is_empty(), "search input is never query syntax");
    let limited = m
        .recent(&OperationQuery {
            limit: Some(3),
            ..OperationQuery::default()
        })
        .unwrap();
    assert_eq!(limited.len(), 3);
    // Counting agrees with reading, filter by filter.
    let session = m.current_session().unwrap().id;
    for q in [
        OperationQuery::default(),
        OperationQuery {
            kind: Some("nl_command".into()),
            ..OperationQuery::default()
        },
        OperationQuery {
            session_id: Some(session.clone()),
            kind: Some("validation".into()),
            ..OperationQuery::default()
        },
        OperationQuery {
            session_id: Some("no-such-session".into()),
            ..OperationQuery::default()
        },
        OperationQuery {
            keywords: Some("bcrypt password".into()),
            ..OperationQuery::default()
        },
        OperationQuery {
            keywords: Some("\"(*) OR".into()),
            ..OperationQuery::default()
        },
        OperationQuery {
            limit: Some(3),
            ..OperationQuery::default()
        },
    ] {
        let read = m.store().operations(&q).unwrap().len() as u64;
        assert_eq!(m.store().count_operations(&q).unwrap(), read, "{q:?}");
    }
    m.message(NewMessage {
        role: Role::User,
        content: "Use RS256 for signing".into(),
        agent: None,
        tokens: None,
    })
    .unwrap();
    let found = m
        .recent_messages(&MessageQuery {
            keywords: Some("rs256".into()),
            ..MessageQuery::default()
        })
        .unwrap();
    assert_eq!(found.len(), 1);
}

pub fn sessions_lifecycle<S: Store>(fresh: &dyn Fn() -> S) {
    let m = memory(fresh(), "orchestrator");
    let first = m.current_session().unwrap();
    assert_eq!(first.status, SessionStatus::Active);
    assert_eq!(
        m.current_session().unwrap().id,
        first.id,
        "the active session is reused"
    );
    for i in 0..12 {
        m.message(NewMessage {
            role: Role::User,
            content: format!("message {i}"),
            agent: None,
            tokens: Some(5),
        })
        .unwrap();
    }
    m.record(NewOperation {
        kind: "task_execution".into(),
        tokens: Some(100),
        ..NewOperation::default()
    })
    .unwrap();
    let s = m.store().session(&first.id).unwrap();
    assert_eq!((s.message_count, s.operation_count, s.tokens), (12, 1, 160));
    assert!(s.last_activity > s.started_at);

    let ended = m.end_session(None).unwrap();
    assert_eq!(ended.status, SessionStatus::Ended);
    assert!(ended.ended_at.is_some());
    let second = m.start_session(Some("JWT authentication")).unwrap();
    assert_ne!(second.id, first.id);
    let third = m.start_session(None).unwrap();
    assert_eq!(
        m.store().session(&second.id).unwrap().status,
        SessionStatus::Ended,
        "starting a session ends the agent's current one"
    );
    m.end_session(Some(&third.id)).unwrap();
    m.restore_session(&second.id).unwrap();
    let archived = m
        .archive_session(Some(&first.id), Some("Kick-off"))
        .unwrap();
    assert_eq!(
        (archived.status, archived.title.as_deref()),
        (SessionStatus::Archived, Some("Kick-off"))
    );

    let listed = m.store().sessions(10).unwrap();
    assert_eq!(listed.len(), 3);
    let restored = m.restore_session(&first.id).unwrap();
    assert_eq!(restored.session.status, SessionStatus::Active);
    assert_eq!(restored.recent_messages.len(), 10, "the last ten messages");
    assert_eq!(
        restored.recent_messages.first().unwrap().content,
        "message 2"
    );
    assert_eq!(
        restored.recent_messages.last().unwrap().content,
        "message 11"
    );
    assert_eq!(
        m.store().session(&second.id).unwrap().status,
        SessionStatus::Ended,
        "restoring ends the other active session"
    );
    assert_eq!(m.current_session().unwrap().id, first.id);
    assert!(matches!(
        m.store().session("00000000-no"),
        Err(StoreError::NotFound { .. })
    ));
}

pub fn working_memory_rebuilds<S: Store>(fresh: &dyn Fn() -> S) {
    let m = memory(fresh(), "orchestrator");
    let mut incremental = WorkingMemory::new(10, 2_000);
    for i in 0..25u64 {
        let op = m
            .record(NewOperation {
                kind: "task_execution".into(),
                tokens: Some(50 + i * 7),
                ..NewOperation::default()
            })
            .unwrap();
        incremental.push(op);
    }
    assert_eq!(
        m.working_memory().unwrap(),
        incremental,
        "a restart rebuilds working memory exactly"
    );
}

pub fn thousands_of_records<S: Store>(fresh: &dyn Fn() -> S) {
    let m = memory(fresh(), "orchestrator");
    for i in 0..1_200 {
        m.record(NewOperation {
            kind: "task_execution".into(),
            data: json!({"task": i}),
            tokens: Some(10),
            ..NewOperation::default()
        })
        .unwrap();
    }
    let all = m.recent(&OperationQuery::default()).unwrap();
    assert_eq!(all.len(), 1_200);
    assert!(all.windows(2).all(|w| w[0].seq > w[1].seq));
    assert_eq!(m.current_session().unwrap().operation_count, 1_200);
}
