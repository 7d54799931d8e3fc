//! Conformance: the tiers above the logs (hot context with versions, decision
//! records, project entities, episodic documents) as every store must keep them.

use std::sync::Arc;

use serde_json::json;

use mnemon_core::memory::{
    HotItemChange, HotKind, HotStatus, NewDecision, OperationQuery, Priority, Store, StoreError,
};

use crate::memory;

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
