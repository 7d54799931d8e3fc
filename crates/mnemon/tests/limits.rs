//! Every listing verb refuses a limit of zero or past `MAX_LIST` in the
//! library, with the same error whichever interface asked: the adapters
//! parse and print, and this is the one place the rule is checked.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon::{EntityQuery, Error, MAX_LIST, MessageQuery, Mnemon, OperationQuery};

fn refused(r: Result<impl std::fmt::Debug, Error>, value: u64) {
    match r {
        Err(Error::OutOfRange {
            what,
            value: v,
            min,
            max,
            ..
        }) => {
            assert_eq!((what, v, min, max), ("limit", value, 1, MAX_LIST));
        }
        other => panic!("limit {value} was not refused: {other:?}"),
    }
}

#[test]
fn a_listing_of_nothing_or_of_too_much_is_refused_by_every_verb() {
    let m = Mnemon::in_memory().unwrap();
    let too_many = MAX_LIST as usize + 1;
    for n in [0, too_many] {
        let v = n as u64;
        refused(m.search("anything", n), v);
        refused(
            m.recent(&OperationQuery {
                limit: Some(n),
                ..OperationQuery::default()
            }),
            v,
        );
        refused(
            m.messages(&MessageQuery {
                limit: Some(n),
                ..MessageQuery::default()
            }),
            v,
        );
        refused(
            m.entities(&EntityQuery {
                limit: Some(n),
                ..EntityQuery::default()
            }),
            v,
        );
        refused(m.sessions(n), v);
        refused(m.checkpoints(n), v);
        refused(m.decisions(Some(n)), v);
        refused(m.compactions(n), v);
        refused(m.forgettings(n), v);
        refused(m.timeline(n), v);
    }
    // The bounds themselves are allowed.
    assert!(m.sessions(1).is_ok());
    assert!(m.sessions(MAX_LIST as usize).is_ok());
    assert!(m.decisions(None).is_ok(), "no limit: everything");
}
