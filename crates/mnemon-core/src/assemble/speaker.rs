//! A question about one of a conversation's speakers is mostly answered by
//! what that speaker said: people tell their own news, jobs and plans.

use std::collections::HashSet;

use super::retrieve::{label_of, raise};
use super::seam::{HitSource, Ranked};

/// How much a record said by the one speaker a question names is raised.
/// On the development conversations, 94 % (REALTALK) and 82 % (LoCoMo) of
/// the evidence of a question naming one of two speakers was said by them,
/// where half of all turns are. A raise only reorders records that match
/// the question about as well; stronger ones (1.3, 1.5) lost 0.004-0.005
/// at 1K on LoCoMo, 1.2 lost no more than 0.001 on any development set
/// (BENCHMARKS.md, 2026-11-28).
pub const SPEAKER_BOOST: f64 = 1.2;

/// The speaker of a message: the label of its first line (`Kate: …`),
/// lower-cased. Operations are left out: a label there is a kind of step
/// ("error: …"), not a person.
fn speaker_of(r: &Ranked) -> Option<String> {
    if r.hit.source != HitSource::Message {
        return None;
    }
    label_of(r.hit.text.lines().next()?)
}

/// `ranked` with the messages said by the one speaker `query` names raised
/// by [`SPEAKER_BOOST`], when the messages come from two speakers or more
/// and the question names exactly one of them. A question naming both
/// ("do Kate and Ben…") or none is left as it is.
pub fn said_by_the_one_named(query: &str, ranked: Vec<Ranked>) -> Vec<Ranked> {
    let speakers: Vec<Option<String>> = ranked.iter().map(speaker_of).collect();
    let known: HashSet<&str> = speakers.iter().flatten().map(String::as_str).collect();
    if known.len() < 2 {
        return ranked;
    }
    let lower = query.to_lowercase();
    let words: HashSet<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // A full name is named by its first word too: "Fahim" names the
    // speaker labelled "Fahim Khan".
    let named: Vec<&str> = known
        .iter()
        .copied()
        .filter(|s| {
            s.split(' ')
                .next()
                .is_some_and(|first| words.contains(first))
        })
        .collect();
    let [one] = named.as_slice() else {
        return ranked;
    };
    let one = *one;
    raise(ranked, SPEAKER_BOOST, |i, _| {
        speakers[i].as_deref() == Some(one)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::seam::{Hit, HitSource};
    use crate::memory::Timestamp;

    fn said(id: &str, source: HitSource, text: &str, score: f64) -> Ranked {
        Ranked {
            hit: Hit {
                source,
                id: id.into(),
                text: text.into(),
                bm25: 0.0,
                at: Timestamp(0),
                importance: 0.5,
                row: 0,
            },
            score,
        }
    }

    fn chat() -> Vec<Ranked> {
        vec![
            said(
                "m1",
                HitSource::Message,
                "Ben: My job is boring lately.",
                1.0,
            ),
            said(
                "m2",
                HitSource::Message,
                "Kate: I started at the clinic!",
                0.9,
            ),
            said("doc:x", HitSource::Document, "Kate: a note", 0.85),
            said("o9", HitSource::Operation, "Kate: a step", 0.8),
            said("m3", HitSource::Message, "Ben: Nice.", 0.2),
        ]
    }

    fn ids(ranked: &[Ranked]) -> Vec<&str> {
        ranked.iter().map(|r| r.hit.id.as_str()).collect()
    }

    #[test]
    fn what_the_one_named_said_comes_first() {
        let out = said_by_the_one_named("What is Kate's job?", chat());
        assert_eq!(ids(&out), ["m2", "m1", "doc:x", "o9", "m3"]);
        assert!((out[0].score - 0.9 * SPEAKER_BOOST).abs() < 1e-9);
        // Only messages are said by someone.
        assert_eq!(out[2].score, 0.85);
        assert_eq!(out[3].score, 0.8);
    }

    #[test]
    fn a_question_naming_both_or_neither_is_left_alone() {
        for q in [
            "Do Kate and Ben like their jobs?",
            "Who has a job?",
            "Is Kat ok?",
        ] {
            assert_eq!(
                ids(&said_by_the_one_named(q, chat())),
                ["m1", "m2", "doc:x", "o9", "m3"],
                "{q}"
            );
        }
    }

    #[test]
    fn a_full_name_label_is_named_by_its_first_word() {
        let mut full = chat();
        for r in &mut full {
            r.hit.text = r.hit.text.replace("Kate:", "Kate Olsen:");
        }
        let out = said_by_the_one_named("What is Kate's job?", full);
        assert_eq!(ids(&out), ["m2", "m1", "doc:x", "o9", "m3"]);
        assert!((out[0].score - 0.9 * SPEAKER_BOOST).abs() < 1e-9);
    }

    #[test]
    fn one_speaker_alone_is_no_cue() {
        let mut one = chat();
        one.retain(|r| r.hit.text.starts_with("Ben"));
        let before = ids(&one).join(",");
        let out = said_by_the_one_named("What did Ben say about his job?", one);
        assert_eq!(ids(&out).join(","), before);
        assert_eq!(out[0].score, 1.0);
    }
}
