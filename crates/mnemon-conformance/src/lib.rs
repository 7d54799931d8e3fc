//! The behaviour every mnemon storage backend must show.
//!
//! Each check takes a factory that returns a fresh, empty store and panics
//! with a message on any deviation. A backend's own test file calls
//! [`run_all`] (and its process-level durability tests, which are specific
//! to how that backend runs).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test suite: a panic with a message is how it reports a deviation"
)]

mod forget;
mod full;

pub use full::{Backend, run_full};

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use mnemon_core::importance::Role;
use mnemon_core::memory::{
    Clock, HotItemChange, HotKind, HotStatus, Memory, MessageQuery, NewDecision, NewMessage,
    NewOperation, OperationQuery, Phase, Priority, SessionStatus, Store, StoreError, Timestamp,
    WorkingMemory,
};
use mnemon_core::tokens::{Encoding, OpenAiBpe, TokenCounter};
use serde_json::json;

/// A clock that starts at a fixed instant and moves one second per reading,
/// so every record has a distinct, predictable time.
#[derive(Debug)]
pub struct SteppingClock(AtomicI64);

impl SteppingClock {
    pub fn starting(at: Timestamp) -> Arc<SteppingClock> {
        Arc::new(SteppingClock(AtomicI64::new(at.0)))
    }
}

impl Clock for SteppingClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.fetch_add(1_000, Ordering::SeqCst))
    }
}

/// 2025-01-15T14:30:00Z, the seeds' example session.
pub const T0: Timestamp = Timestamp(1_736_951_400_000);

pub fn memory<S: Store>(store: S, agent: &str) -> Memory<S> {
    Memory::new(
        store,
        Box::new(OpenAiBpe::new(Encoding::Cl100kBase)),
        SteppingClock::starting(T0),
        Some(agent),
        (10, 2_000),
    )
}

/// Every check, in order.
pub fn run_all<S: Store + 'static>(fresh: &dyn Fn() -> S) {
    operations_round_trip(fresh);
    messages_round_trip(fresh);
    queries_filter_and_search(fresh);
    sessions_lifecycle(fresh);
    hot_context_versions(fresh);
    decision_records(fresh);
    project_entities(fresh);
    episodic_documents(fresh);
    working_memory_rebuilds(fresh);
    thousands_of_records(fresh);
    concurrent_writers_lose_nothing(fresh);
    agents_adding_goals_never_conflict(fresh);
}

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

pub fn hot_context_versions<S: Store>(fresh: &dyn Fn() -> S) {
    let store = fresh();
    let a = memory(store, "agent-a");
    let goal = a
        .add_hot(
            HotKind::Goal,
            "Implement JWT authentication",
            None,
            Some(Priority::High),
            None,
        )
        .unwrap();
    assert_eq!((goal.version, goal.status), (1, HotStatus::Pending));
    let sub = a
        .add_hot(HotKind::Goal, "Write tests", None, None, Some(&goal.id))
        .unwrap();
    assert_eq!(sub.parent_id.as_deref(), Some(goal.id.as_str()));
    a.add_hot(
        HotKind::Constraint,
        "Token TTL must be 1 hour",
        None,
        None,
        None,
    )
    .unwrap();
    a.add_hot(
        HotKind::Decision,
        "Use RS256 instead of HS256",
        Some("Better security for distributed systems"),
        None,
        None,
    )
    .unwrap();
    a.add_hot(
        HotKind::File,
        "auth/jwt.py",
        Some("validate_jwt_token"),
        None,
        None,
    )
    .unwrap();

    let started = a
        .update_hot(
            &goal.id,
            1,
            HotItemChange {
                status: Some(HotStatus::InProgress),
                ..HotItemChange::default()
            },
        )
        .unwrap();
    assert_eq!(started.version, 2);
    // A second writer still holding version 1 is refused and shown the current state.
    match a.update_hot(
        &goal.id,
        1,
        HotItemChange {
            status: Some(HotStatus::Complete),
            ..HotItemChange::default()
        },
    ) {
        Err(StoreError::Conflict {
            expected: 1,
            actual: 2,
            current,
            ..
        }) => assert_eq!(current.status, HotStatus::InProgress),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(matches!(
        a.update_hot(
            &goal.id,
            2,
            HotItemChange {
                status: Some(HotStatus::Active),
                ..HotItemChange::default()
            }
        ),
        Err(StoreError::Invalid(_))
    ));
    let hot = a.hot().unwrap();
    assert_eq!(hot.of_kind(HotKind::Goal).count(), 2);
    let md = hot.to_markdown();
    assert!(
        md.contains(
            "## Active Goals\n- 🔄 Implement JWT authentication (high)\n- ⏳ Write tests\n"
        ),
        "{md}"
    );
    assert!(
        md.contains("*Rationale: Better security for distributed systems*"),
        "{md}"
    );
    assert_eq!(
        hot.to_json()["current_file_context"]["current_function"],
        "validate_jwt_token"
    );

    a.update_hot(
        &goal.id,
        2,
        HotItemChange {
            status: Some(HotStatus::Complete),
            ..HotItemChange::default()
        },
    )
    .unwrap();
    let after = a.hot().unwrap();
    assert_eq!(
        after.of_kind(HotKind::Goal).count(),
        1,
        "completed goals leave the hot context"
    );
    assert!(after.version > hot.version);
    // Every change was recorded as a pinned operation.
    let log = a
        .recent(&OperationQuery {
            kind: Some("goal_updated".into()),
            ..OperationQuery::default()
        })
        .unwrap();
    assert_eq!(log.len(), 2);
    assert!(log.iter().all(|o| o.pinned));
}

pub fn decision_records<S: Store>(fresh: &dyn Fn() -> S) {
    let m = memory(fresh(), "orchestrator");
    let d = NewDecision::from_json(&json!({
        "title": "Use RS256 for JWT signing",
        "context": "Several services verify tokens.",
        "decision": "Sign with RS256.",
        "consequences": {"positive": ["No shared secret"], "negative": ["Key rotation"], "mitigations": ["JWKS endpoint"]},
        "alternatives": [{"option": "HS256", "rejected_because": "shares the secret"}],
        "assumptions": ["Services can reach the JWKS"],
        "status": "Accepted"
    }))
    .unwrap();
    let r = m.decide(&d).unwrap();
    assert!(
        r.id.starts_with("DR-")
            && r.id.len() == 11
            && r.id[3..].chars().all(|c| c.is_ascii_hexdigit()),
        "{}",
        r.id
    );
    assert_eq!(
        m.store().decision(&r.id).unwrap(),
        r,
        "the record round-trips"
    );
    assert_eq!(
        m.store().decision(&r.id[3..]).unwrap().id,
        r.id,
        "the hex part finds it"
    );
    let log = m
        .recent(&OperationQuery {
            kind: Some("decision".into()),
            ..OperationQuery::default()
        })
        .unwrap();
    assert_eq!(log[0].data["id"], r.id.as_str());
    assert!(log[0].pinned);
    assert!(
        m.hot()
            .unwrap()
            .of_kind(HotKind::Decision)
            .any(|h| h.text.contains(&r.id))
    );

    let mut next = d.clone();
    next.title = "Use EdDSA for JWT signing".into();
    next.decision = "Sign with Ed25519.".into();
    let (old, new) = m.supersede(&r.id, &next).unwrap();
    assert_eq!(old.status, mnemon_core::memory::DecisionStatus::Superseded);
    assert_eq!(old.superseded_by.as_deref(), Some(new.id.as_str()));
    assert!(matches!(
        m.set_decision_status(&old.id, mnemon_core::memory::DecisionStatus::Accepted),
        Err(StoreError::Invalid(_))
    ));
    assert_eq!(m.store().decisions(None).unwrap().len(), 2);
    let mut bad = d.clone();
    bad.context = "<think>let me think</think>".into();
    assert!(matches!(m.decide(&bad), Err(StoreError::Invalid(_))));
    assert!(matches!(
        m.store().decision("DR-00000000"),
        Err(StoreError::NotFound { .. })
    ));
}

pub fn project_entities<S: Store + 'static>(fresh: &dyn Fn() -> S) {
    use mnemon_core::memory::{EntityChange, EntityKind, EntityQuery, EntityStatus, NewEntity};
    let m = Arc::new(memory(fresh(), "orchestrator"));
    let new = |kind, title: &str, parent, priority| NewEntity {
        kind,
        title: title.into(),
        description: None,
        priority,
        parent,
    };
    let project = m
        .create_entity(&new(EntityKind::Project, "obra", None, None))
        .unwrap();
    assert_eq!(project.number, 1);
    let epic = m
        .create_entity(&new(
            EntityKind::Epic,
            "User Authentication",
            Some(project.number),
            Some(1),
        ))
        .unwrap();
    assert_eq!(epic.label(), "Epic #2 \"User Authentication\"");
    let stories: Vec<_> = ["login", "signup", "MFA"]
        .iter()
        .map(|t| {
            m.create_entity(&new(EntityKind::Story, t, Some(epic.number), None))
                .unwrap()
        })
        .collect();
    assert_eq!(
        stories.iter().map(|s| s.number).collect::<Vec<_>>(),
        vec![3, 4, 5],
        "one sequence for every kind"
    );

    // 1,000+ tasks, as the seeds' scale target asks.
    for i in 0..1_000u64 {
        let parent = stories[(i % 3) as usize].number;
        m.create_entity(&new(
            EntityKind::Task,
            &format!("task {i}"),
            Some(parent),
            Some((i % 5 + 1) as u8),
        ))
        .unwrap();
    }
    m.update_entity(
        10,
        &EntityChange {
            status: Some(EntityStatus::InProgress),
            ..EntityChange::default()
        },
    )
    .unwrap();
    m.update_entity(
        11,
        &EntityChange {
            status: Some(EntityStatus::Blocked),
            ..EntityChange::default()
        },
    )
    .unwrap();
    m.update_entity(
        12,
        &EntityChange {
            status: Some(EntityStatus::Completed),
            ..EntityChange::default()
        },
    )
    .unwrap();
    let tasks = |status| {
        m.store()
            .entities(&EntityQuery {
                kind: Some(EntityKind::Task),
                status: Some(status),
                ..EntityQuery::default()
            })
            .unwrap()
    };
    assert_eq!(tasks(EntityStatus::InProgress).len(), 1);
    assert_eq!(tasks(EntityStatus::Blocked)[0].number, 11);
    let backlog = m
        .store()
        .entities(&EntityQuery {
            status: Some(EntityStatus::Pending),
            limit: Some(5),
            ..EntityQuery::default()
        })
        .unwrap();
    assert!(
        backlog
            .windows(2)
            .all(|w| (w[0].priority, w[0].number) < (w[1].priority, w[1].number)),
        "most urgent first"
    );
    assert_eq!(backlog[0].priority, 1);
    let counts = m.store().status_counts().unwrap();
    let pending_tasks = counts
        .iter()
        .find(|c| c.kind == EntityKind::Task && c.status == EntityStatus::Pending)
        .unwrap();
    assert_eq!(pending_tasks.count, 997);
    assert_eq!(
        m.store()
            .entities(&EntityQuery {
                parent: Some(epic.number),
                ..EntityQuery::default()
            })
            .unwrap()
            .len(),
        3
    );

    // The hierarchy and the lifecycle are enforced.
    assert!(matches!(
        m.create_entity(&new(EntityKind::Story, "orphan", Some(10), None)),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        m.create_entity(&new(EntityKind::Task, "x", Some(99_999), None)),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        m.create_entity(&new(EntityKind::Task, "x", None, Some(9))),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        m.update_entity(
            12,
            &EntityChange {
                status: Some(EntityStatus::Pending),
                ..EntityChange::default()
            }
        ),
        Err(StoreError::Invalid(_))
    ));
    // Completing an epic is recorded and pinned.
    m.update_entity(
        epic.number,
        &EntityChange {
            status: Some(EntityStatus::Completed),
            ..EntityChange::default()
        },
    )
    .unwrap();
    let log = m
        .recent(&OperationQuery {
            kind: Some("entity_updated".into()),
            limit: Some(1),
            ..OperationQuery::default()
        })
        .unwrap();
    assert!(log[0].pinned, "an epic completion is pinned");

    // Concurrent creation never reuses a number.
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                (0..25)
                    .map(|i| {
                        m.create_entity(&new(EntityKind::Task, &format!("t{t}-{i}"), None, None))
                            .unwrap()
                            .number
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut numbers: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    numbers.sort();
    numbers.dedup();
    assert_eq!(numbers.len(), 100);

    // Deleting: refused while children live; afterwards the number stays
    // taken, the entity leaves listings, and reading it says it was deleted.
    let parent = m
        .create_entity(&new(EntityKind::Epic, "to delete", None, None))
        .unwrap();
    let child = m
        .create_entity(&new(EntityKind::Story, "child", Some(parent.number), None))
        .unwrap();
    let refused = m.delete_entity(parent.number).unwrap_err();
    assert!(refused.to_string().contains("still holds"), "{refused}");
    m.delete_entity(child.number).unwrap();
    m.delete_entity(parent.number).unwrap();
    let err = m.store().entity(parent.number).unwrap_err();
    assert!(err.to_string().contains("was deleted"), "{err}");
    assert!(
        m.store()
            .entities(&EntityQuery::default())
            .unwrap()
            .iter()
            .all(|e| e.number != parent.number && e.number != child.number)
    );
    let next = m
        .create_entity(&new(EntityKind::Epic, "after", None, None))
        .unwrap();
    assert_eq!(next.number, child.number + 1, "numbers are never reused");
    assert!(
        m.recent(&mnemon_core::memory::OperationQuery {
            kind: Some("entity_deleted".into()),
            ..Default::default()
        })
        .unwrap()
        .len()
            == 2
    );
}

pub fn episodic_documents<S: Store>(fresh: &dyn Fn() -> S) {
    use mnemon_core::memory::{DocKind, EntityChange, EntityKind, EntityStatus, NewEntity};
    let m = memory(fresh(), "orchestrator");
    let new = |kind, title: &str, parent| NewEntity {
        kind,
        title: title.into(),
        description: None,
        priority: None,
        parent,
    };
    let epic = m
        .create_entity(&new(EntityKind::Epic, "User Authentication", None))
        .unwrap();
    let story = m
        .create_entity(&new(EntityKind::Story, "login", Some(epic.number)))
        .unwrap();
    let task = m
        .create_entity(&new(
            EntityKind::Task,
            "Implement password hashing",
            Some(story.number),
        ))
        .unwrap();
    m.create_entity(&new(EntityKind::Milestone, "Beta", None))
        .unwrap();
    m.update_entity(
        task.number,
        &EntityChange {
            status: Some(EntityStatus::InProgress),
            ..EntityChange::default()
        },
    )
    .unwrap();

    let [state, plan, log] = m.refresh_documents(2).unwrap();
    assert_eq!((state.version, plan.version, log.version), (1, 1, 1));
    assert!(
        state
            .content
            .contains("## Active Work\n\n- Task #3 \"Implement password hashing\""),
        "{}",
        state.content
    );
    assert!(
        state
            .content
            .contains("- Created Epic #1 \"User Authentication\""),
        "{}",
        state.content
    );
    assert!(state.content.contains("- **Total Tasks**: 1"));
    assert!(
        plan.content.contains("- Finish Task #3"),
        "{}",
        plan.content
    );
    assert!(
        plan.content
            .contains("## Future Work\n\n- Milestone #4 \"Beta\""),
        "{}",
        plan.content
    );
    assert!(log.content.contains("No decisions recorded yet."));

    // Unchanged facts keep the version; a change adds one and old ones are pruned.
    assert_eq!(m.refresh_documents(2).unwrap()[0].version, 1);
    for status in [
        EntityStatus::Blocked,
        EntityStatus::InProgress,
        EntityStatus::Completed,
        EntityStatus::InProgress,
    ] {
        m.update_entity(
            task.number,
            &EntityChange {
                status: Some(status),
                ..EntityChange::default()
            },
        )
        .unwrap();
        m.refresh_documents(2).unwrap();
    }
    let versions = m.store().document_versions(DocKind::ProjectState).unwrap();
    assert_eq!(
        versions.iter().map(|d| d.version).collect::<Vec<_>>(),
        vec![5, 4, 3],
        "current plus keep_versions = 2"
    );
    assert!(
        m.store()
            .document(DocKind::ProjectState, Some(4))
            .unwrap()
            .content
            .contains("Completed")
    );
    assert!(matches!(
        m.store().document(DocKind::ProjectState, Some(1)),
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

/// Two agents adding goals at the same moment never conflict.
pub fn agents_adding_goals_never_conflict<S: Store + 'static>(fresh: &dyn Fn() -> S) {
    let m = Arc::new(memory(fresh(), "agent-a"));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                for i in 0..20 {
                    m.add_hot(HotKind::Goal, &format!("goal {t}-{i}"), None, None, None)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let hot = m.hot().unwrap();
    assert_eq!(hot.of_kind(HotKind::Goal).count(), 80);
    assert!(hot.version >= 80, "every add moved the version");
}

/// Eight threads share one store and write at once: every write lands once.
pub fn concurrent_writers_lose_nothing<S: Store + 'static>(fresh: &dyn Fn() -> S) {
    let m = Arc::new(memory(fresh(), "orchestrator"));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                (0..100)
                    .map(|i| {
                        m.record(NewOperation {
                            kind: "write".into(),
                            data: json!({"t": t, "i": i}),
                            tokens: Some(1),
                            ..NewOperation::default()
                        })
                        .unwrap()
                        .id
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<String> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let stored = m
        .recent(&OperationQuery {
            kind: Some("write".into()),
            ..OperationQuery::default()
        })
        .unwrap();
    assert_eq!(stored.len(), 800);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 800, "no duplicate ids");
}

/// An engine over `store` for a model with a `window`-token context, using
/// the profile that window selects and cl100k counting.
pub fn engine<S: mnemon_core::engine::EngineStore>(
    store: S,
    window: u64,
    clock: Arc<dyn Clock>,
    agent: &str,
) -> mnemon_core::engine::Engine<S> {
    use mnemon_core::engine::{Engine, EngineConfig};
    use mnemon_core::profile::ProfileParams;
    use mnemon_core::window::ContextWindow;
    let w = ContextWindow::with_defaults(window).expect("a valid window");
    let profile = ProfileParams::for_window(w.effective_max());
    let limits = (
        profile.working_memory_max_operations.value as usize,
        profile.working_memory_max_tokens.value,
    );
    let memory = Memory::new(
        store,
        Box::new(OpenAiBpe::new(Encoding::Cl100kBase)),
        clock,
        Some(agent),
        limits,
    );
    Engine::new(memory, EngineConfig::new(w, profile, "test-model"))
}
