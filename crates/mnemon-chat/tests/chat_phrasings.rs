//! The phrasing table: how people really type project commands, and what
//! the rule-based parser must make of each. Any parser plugged into the
//! chat (an LLM one later) should pass the same table.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_chat::{
    Command, CommandParser, Field, Parsed, Question, RuleParser, StatusFilter, Target, Which,
};
use mnemon_core::memory::{EntityKind, EntityStatus};

use EntityKind::{Epic, Milestone, Story, Task};
use EntityStatus::{Blocked, Completed, InProgress, Pending};

fn num(n: u64, kind: Option<EntityKind>) -> Target {
    Target::Number { number: n, kind }
}

fn it() -> Target {
    Target::Pronoun { plural: false }
}

fn them() -> Target {
    Target::Pronoun { plural: true }
}

fn named(kind: EntityKind, which: Which) -> Target {
    Target::Named { kind, which }
}

fn create(
    kind: EntityKind,
    titles: &[&str],
    parent: Option<Target>,
    priority: Option<u8>,
) -> Command {
    Command::Create {
        kind,
        titles: titles.iter().map(|s| s.to_string()).collect(),
        parent,
        priority,
    }
}

fn status(target: Target, s: EntityStatus) -> Command {
    Command::SetStatus { target, status: s }
}

fn list(kind: Option<EntityKind>, st: Option<StatusFilter>, parent: Option<Target>) -> Command {
    Command::List {
        kind,
        status: st,
        parent,
    }
}

fn ask(q: Question) -> Command {
    Command::Ask(q)
}

fn table() -> Vec<(&'static str, Command)> {
    vec![
        // Creating, with the seeds' own examples first.
        (
            "Create an epic for user authentication",
            create(Epic, &["user authentication"], None, None),
        ),
        (
            "Create epic for authentication",
            create(Epic, &["authentication"], None, None),
        ),
        (
            "Add 3 stories to it: login, signup, and MFA",
            create(Story, &["login", "signup", "MFA"], Some(it()), None),
        ),
        (
            "add three stories to epic 5: login, signup and MFA",
            create(
                Story,
                &["login", "signup", "MFA"],
                Some(num(5, Some(Epic))),
                None,
            ),
        ),
        (
            "please add 2 stories under #5: password reset; email verification",
            create(
                Story,
                &["password reset", "email verification"],
                Some(num(5, None)),
                None,
            ),
        ),
        (
            "new epic: Payments",
            create(Epic, &["Payments"], None, None),
        ),
        (
            "make a new milestone called v1.0 launch",
            create(Milestone, &["v1.0 launch"], None, None),
        ),
        (
            "can you create a task to write the login form under story 6",
            create(
                Task,
                &["write the login form"],
                Some(num(6, Some(Story))),
                None,
            ),
        ),
        (
            "add a task to story 7: write integration tests",
            create(
                Task,
                &["write integration tests"],
                Some(num(7, Some(Story))),
                None,
            ),
        ),
        (
            "add task 'fix the flaky test' to the first story",
            create(
                Task,
                &["fix the flaky test"],
                Some(named(Story, Which::First)),
                None,
            ),
        ),
        (
            "create a high priority task under epic 5 called rate limiting",
            create(Task, &["rate limiting"], Some(num(5, Some(Epic))), Some(2)),
        ),
        (
            "create task fix login bug under story 6 with priority 1",
            create(Task, &["fix login bug"], Some(num(6, Some(Story))), Some(1)),
        ),
        (
            "let's add an urgent task for it: patch the session cookie",
            create(Task, &["patch the session cookie"], Some(it()), Some(1)),
        ),
        (
            "Add stories login and logout to the epic",
            create(
                Story,
                &["login", "logout"],
                Some(named(Epic, Which::Only)),
                None,
            ),
        ),
        (
            "we need a task for password hashing in story 7",
            create(Task, &["password hashing"], Some(num(7, Some(Story))), None),
        ),
        (
            "Create a story called \"Remember me\" in epic 5 (p2)",
            create(Story, &["Remember me"], Some(num(5, Some(Epic))), Some(2)),
        ),
        (
            "add another epic: Reporting",
            create(Epic, &["Reporting"], None, None),
        ),
        (
            "set up an epic for billing",
            create(Epic, &["billing"], None, None),
        ),
        (
            "Add two tasks to the last story: design form and validate input",
            create(
                Task,
                &["design form", "validate input"],
                Some(named(Story, Which::Last)),
                None,
            ),
        ),
        // Status changes.
        ("start task 15", status(num(15, Some(Task)), InProgress)),
        (
            "let's start working on #12",
            status(num(12, None), InProgress),
        ),
        (
            "begin the first story",
            status(named(Story, Which::First), InProgress),
        ),
        ("pick up task 15", status(num(15, Some(Task)), InProgress)),
        ("complete task 15", status(num(15, Some(Task)), Completed)),
        ("finish it", status(it(), Completed)),
        ("Mark it as done", status(it(), Completed)),
        (
            "mark task 15 complete",
            status(num(15, Some(Task)), Completed),
        ),
        ("task 15 is done", status(num(15, Some(Task)), Completed)),
        ("It's finished!", status(it(), Completed)),
        (
            "we finished the second story",
            status(named(Story, Which::Nth(2)), Completed),
        ),
        ("close #12 please", status(num(12, None), Completed)),
        ("done with task 15", status(num(15, Some(Task)), Completed)),
        ("block task 15", status(num(15, Some(Task)), Blocked)),
        (
            "block task 15 until the API is ready",
            status(num(15, Some(Task)), Blocked),
        ),
        ("epic 5 is blocked", status(num(5, Some(Epic)), Blocked)),
        (
            "flag the last task as blocked",
            status(named(Task, Which::Last), Blocked),
        ),
        ("reopen story 6", status(num(6, Some(Story)), InProgress)),
        ("unblock task 15", status(num(15, Some(Task)), Pending)),
        ("mark them done", status(them(), Completed)),
        ("start all of them", status(them(), InProgress)),
        (
            "set task 15 to in progress",
            status(num(15, Some(Task)), InProgress),
        ),
        (
            "change the status of story 7 to blocked",
            status(num(7, Some(Story)), Blocked),
        ),
        // Updates.
        (
            "rename epic 5 to Accounts",
            Command::Update {
                target: num(5, Some(Epic)),
                field: Field::Title("Accounts".into()),
            },
        ),
        (
            "change the title of story 6 to Sign in",
            Command::Update {
                target: num(6, Some(Story)),
                field: Field::Title("Sign in".into()),
            },
        ),
        (
            "set the priority of task 15 to 1",
            Command::Update {
                target: num(15, Some(Task)),
                field: Field::Priority(1),
            },
        ),
        (
            "make task 15 high priority",
            Command::Update {
                target: num(15, Some(Task)),
                field: Field::Priority(2),
            },
        ),
        (
            "change task 15's priority to low",
            Command::Update {
                target: num(15, Some(Task)),
                field: Field::Priority(4),
            },
        ),
        (
            "prioritize #12",
            Command::Update {
                target: num(12, None),
                field: Field::Priority(1),
            },
        ),
        (
            "update the description of it: users sign in with email and password",
            Command::Update {
                target: it(),
                field: Field::Description("users sign in with email and password".into()),
            },
        ),
        // Deleting.
        (
            "delete task 15",
            Command::Delete {
                target: num(15, Some(Task)),
            },
        ),
        ("remove it", Command::Delete { target: it() }),
        (
            "get rid of the last story",
            Command::Delete {
                target: named(Story, Which::Last),
            },
        ),
        // Listing and showing.
        ("list epics", list(Some(Epic), None, None)),
        ("show all stories", list(Some(Story), None, None)),
        (
            "list open tasks in epic 5",
            list(
                Some(Task),
                Some(StatusFilter::Open),
                Some(num(5, Some(Epic))),
            ),
        ),
        (
            "show me the tasks under story 7",
            list(Some(Task), None, Some(num(7, Some(Story)))),
        ),
        (
            "what tasks are in epic 5?",
            list(Some(Task), None, Some(num(5, Some(Epic)))),
        ),
        (
            "which tasks are blocked",
            list(Some(Task), Some(StatusFilter::Is(Blocked)), None),
        ),
        ("what epics do we have?", list(Some(Epic), None, None)),
        (
            "list completed stories",
            list(Some(Story), Some(StatusFilter::Is(Completed)), None),
        ),
        ("list everything", list(None, None, None)),
        (
            "show epic 5",
            Command::Show {
                target: num(5, Some(Epic)),
            },
        ),
        (
            "show me #12",
            Command::Show {
                target: num(12, None),
            },
        ),
        (
            "tell me about the epic",
            Command::Show {
                target: named(Epic, Which::Only),
            },
        ),
        (
            "details of the login story",
            Command::Show {
                target: Target::Title {
                    kind: Some(Story),
                    text: "login".into(),
                },
            },
        ),
        // Questions about memory.
        ("What did we just do?", ask(Question::JustDid)),
        ("what have we just done", ask(Question::JustDid)),
        ("recap", ask(Question::JustDid)),
        ("what did we do today?", ask(Question::Day { offset: 0 })),
        (
            "What did we do yesterday",
            ask(Question::Day { offset: -1 }),
        ),
        ("what did we do this session?", ask(Question::Session)),
        ("what have we done so far", ask(Question::Session)),
        (
            "What's the status of epic 5?",
            ask(Question::Status {
                target: Some(num(5, Some(Epic))),
            }),
        ),
        (
            "how is task 15 going?",
            ask(Question::Status {
                target: Some(num(15, Some(Task))),
            }),
        ),
        (
            "where are we on the epic?",
            ask(Question::Status {
                target: Some(named(Epic, Which::Only)),
            }),
        ),
        (
            "epic 5 status",
            ask(Question::Status {
                target: Some(num(5, Some(Epic))),
            }),
        ),
        ("status", ask(Question::Status { target: None })),
        ("What's next?", ask(Question::Next)),
        ("what should we work on next?", ask(Question::Next)),
        ("what's blocked?", ask(Question::Blocked)),
        ("any blockers?", ask(Question::Blocked)),
        (
            "What did we decide about caching?",
            ask(Question::Decided {
                topic: "caching".into(),
            }),
        ),
        (
            "why did we choose Postgres",
            ask(Question::Decided {
                topic: "Postgres".into(),
            }),
        ),
    ]
}

#[test]
fn every_phrasing_parses_to_its_command() {
    let p = RuleParser;
    let table = table();
    assert!(
        table.len() >= 60,
        "the table must hold at least 60 phrasings"
    );
    let mut failures = Vec::new();
    for (input, want) in &table {
        match p.parse(input) {
            Parsed::Command(got) if &got == want => {}
            other => failures.push(format!("{input:?}\n   want {want:?}\n   got  {other:?}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} phrasings failed:\n{}",
        failures.len(),
        table.len(),
        failures.join("\n")
    );
}

#[test]
fn lines_that_cannot_run_as_given_say_what_is_missing() {
    let p = RuleParser;
    for (input, needle) in [
        ("add 3 stories to epic 5", "titles"),
        ("add 3 stories to it: login, signup", "named 2"),
        ("delete", "delete what"),
        ("mark task 15 as purple", "mark it as what"),
        ("set the priority of task 15 to extreme", "not a priority"),
    ] {
        match p.parse(input) {
            Parsed::Incomplete(msg) => assert!(msg.contains(needle), "{input}: {msg}"),
            other => panic!("{input}: expected an explanation, got {other:?}"),
        }
    }
}

#[test]
fn nonsense_gets_the_closest_forms() {
    let p = RuleParser;
    for input in [
        "frobnicate the widget",
        "epics epics epics",
        "creat a epik",
        "tell a joke",
    ] {
        match p.parse(input) {
            Parsed::Unknown { closest } => assert_eq!(closest.len(), 3, "{input}"),
            other => panic!("{input}: expected not understood, got {other:?}"),
        }
    }
    let Parsed::Unknown { closest } = p.parse("creat an epik for payments") else {
        panic!("a misspelt verb is not guessed at");
    };
    assert!(closest[0].starts_with("create"), "{closest:?}");
}
