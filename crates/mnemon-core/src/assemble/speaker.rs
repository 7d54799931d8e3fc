//! A question about one of a conversation's speakers is mostly answered by
//! what that speaker said: people tell their own news, jobs and plans. A
//! user asking in the first person what they said ("the order in which I
//! brought up…") names themselves.

use std::borrow::Cow;
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

/// How much the user's own turns are raised when a question asks in the
/// first person what was said in the conversation. On BEAM's development
/// chats the evidence of such a question (the order in which the user
/// brought topics up) is the user's turns alone, and long answers around
/// them match its words as well. 2 measured best of 1.5, 2 and 3, and
/// raised recall at every budget (BENCHMARKS.md, 2026-11-29); the cue
/// fires on no question of the other development sets.
pub const OWN_WORDS_BOOST: f64 = 2.0;

/// The speaker a question in the first person names: the role of a user's
/// messages (and the label chat exports give them).
const USER: &str = crate::importance::Role::User.name();

/// Words of a question about what was said in the conversation, rather
/// than about the world: "what did I mention", "throughout our
/// conversations".
const SAID: &[&str] = &[
    "brought up",
    "mention",
    "told you",
    "i asked",
    "i said",
    "i shared",
    "our conversation",
    "our discussion",
    "our chat",
];

/// The speaker of a message: the label of its first line (`Kate: …`), as
/// chat logs and transcripts write it, or else its role. The role's name is
/// borrowed: an agent's messages carry no label, and a context ranks
/// hundreds of them.
/// Operations are left out: a label there is a kind of step ("error: …"),
/// not a person.
fn speaker_of(r: &Ranked) -> Option<Cow<'static, str>> {
    if r.hit.source != HitSource::Message {
        return None;
    }
    r.hit
        .text
        .lines()
        .next()
        .and_then(label_of)
        .map(Cow::Owned)
        .or_else(|| r.hit.role.map(|role| Cow::Borrowed(role.name())))
}

/// Whether `lower` (a lower-cased question, `words` its words) asks in the
/// first person what was said in the conversation.
fn asks_what_i_said(lower: &str, words: &HashSet<&str>) -> bool {
    ["i", "my", "me"].iter().any(|w| words.contains(w)) && SAID.iter().any(|s| lower.contains(s))
}

/// `ranked` with the messages said by the one speaker `query` names raised
/// by [`SPEAKER_BOOST`], when the messages come from two speakers or more
/// and the question names exactly one of them. A question naming both
/// ("do Kate and Ben…") or none is left as it is, unless it asks in the
/// first person what was said and one speaker is the user: their turns
/// are raised by [`OWN_WORDS_BOOST`].
pub fn said_by_the_one_named(query: &str, ranked: Vec<Ranked>) -> Vec<Ranked> {
    let speakers: Vec<Option<Cow<'static, str>>> = ranked.iter().map(speaker_of).collect();
    let known: HashSet<&str> = speakers.iter().flatten().map(|s| s.as_ref()).collect();
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
    let mut named: Vec<&str> = known
        .iter()
        .copied()
        .filter(|s| {
            s.split(' ')
                .next()
                .is_some_and(|first| words.contains(first))
        })
        .collect();
    for alias in greeted_by_the_other(&ranked, &speakers, &known, &words) {
        if !named.contains(&alias) {
            named.push(alias);
        }
    }
    let (one, boost) = match named.as_slice() {
        [one] => (*one, SPEAKER_BOOST),
        [] if known.contains(USER) && asks_what_i_said(&lower, &words) => (USER, OWN_WORDS_BOOST),
        _ => return ranked,
    };
    raise(ranked, boost, |i, _| speakers[i].as_deref() == Some(one))
}

/// How many of the latest messages are read for the speakers' names: a
/// chat between a few people has each of them among its last few dozen
/// turns.
pub const SPEAKERS_FROM_LATEST: usize = 64;

/// The names labelling `texts` (`Kate: …` on their first line), lower-cased:
/// the first word of each label, as a question names a speaker.
pub fn speakers_of<'a>(texts: impl IntoIterator<Item = &'a str>) -> HashSet<String> {
    texts
        .into_iter()
        .filter_map(|t| t.lines().next().and_then(label_of))
        .filter_map(|label| label.split(' ').next().map(str::to_string))
        .collect()
}

/// `query` without the names of the conversation's speakers, to be
/// embedded for retrieval by meaning.
///
/// In a chat between two people every turn is said by one of them, so
/// their names tell the turns apart only by who speaks, which
/// [`said_by_the_one_named`] weighs. In a short question embedded whole
/// the names are a large part of the vector ("What animals are Nicolas and
/// Nebraas discussing?" has two names and one word of topic), and every
/// turn that names the two shares them. Left out of the query's vector,
/// the names leave its topic to be matched ("animals": that question's
/// recall at 2K rose from .32 to .47); on the development conversations
/// recall with meaning rose by
/// .05-.06 (REALTALK) and .02 (LoCoMo) at 1K-2K, and BEAM's questions, in
/// the first person, did not move (BENCHMARKS.md, 2026-11-29, late). Only a
/// capitalized word is a name; a question of nothing but names is kept
/// whole.
pub fn without_speakers<'q>(query: &'q str, speakers: &HashSet<String>) -> Cow<'q, str> {
    if speakers.is_empty() {
        return Cow::Borrowed(query);
    }
    let is_speaker = |word: &str| {
        let core = word
            .trim_matches(|c: char| !c.is_alphanumeric())
            .trim_end_matches("'s")
            .trim_end_matches("\u{2019}s");
        core.starts_with(char::is_uppercase) && speakers.contains(&core.to_lowercase())
    };
    let kept: Vec<&str> = query
        .split_whitespace()
        .filter(|w| !is_speaker(w))
        .collect();
    let dropped = kept.len() < query.split_whitespace().count();
    if !dropped || !kept.iter().any(|w| w.contains(char::is_alphanumeric)) {
        return Cow::Borrowed(query);
    }
    Cow::Owned(kept.join(" "))
}

/// Words a message opens with when it greets the one it is written to by
/// name: "Hey Kate! …", "Thanks, Kate".
const GREETINGS: &[&str] = &[
    "hey",
    "hi",
    "hello",
    "thanks",
    "thank you",
    "good morning",
    "morning",
    "dear",
];

/// The name a message opens by greeting, lower-cased: "elise: Hey Kate!
/// How was…" greets "kate". A name is one capitalized word.
fn greeted(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    let body = match label_of(first) {
        Some(_) => first.split_once(':').map_or(first, |(_, rest)| rest),
        None => first,
    }
    .trim_start();
    let rest = GREETINGS.iter().find_map(|g| {
        let rest = body
            .get(..g.len())
            .filter(|opening| opening.eq_ignore_ascii_case(g))
            .map(|_| &body[g.len()..])?;
        (!rest.starts_with(char::is_alphanumeric)).then_some(rest)
    })?;
    let rest = rest.trim_start_matches([',', ' ']);
    let name: String = rest.chars().take_while(|c| c.is_alphabetic()).collect();
    let capital = name.chars().next().is_some_and(char::is_uppercase);
    (capital && name.chars().count() >= 2).then(|| name.to_lowercase())
}

/// Speakers a question names by what the other one calls them. Chat
/// exports label turns with a user name ("Emi: …") that need not be the
/// name people use ("Hey Kate!"), and questions use the latter. Between
/// two speakers, a name one of them greets at least twice, and the other
/// never, is the other's.
fn greeted_by_the_other<'a>(
    ranked: &[Ranked],
    speakers: &[Option<Cow<'static, str>>],
    known: &HashSet<&'a str>,
    words: &HashSet<&str>,
) -> Vec<&'a str> {
    let [a, b] = {
        let mut two: Vec<&'a str> = known.iter().copied().collect();
        if two.len() != 2 {
            return Vec::new();
        }
        two.sort_unstable();
        [two[0], two[1]]
    };
    let first_names: HashSet<&str> = [a, b].iter().filter_map(|s| s.split(' ').next()).collect();
    // name → (greetings by a, greetings by b)
    let mut counts: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for (r, by) in ranked.iter().zip(speakers) {
        let Some(by) = by.as_deref() else { continue };
        let Some(name) = greeted(&r.hit.text) else {
            continue;
        };
        if !words.contains(name.as_str()) || first_names.contains(name.as_str()) {
            continue;
        }
        let c = counts.entry(name).or_default();
        if by == a {
            c.0 += 1;
        } else if by == b {
            c.1 += 1;
        }
    }
    let mut out = Vec::new();
    for (by_a, by_b) in counts.into_values() {
        let other = match (by_a, by_b) {
            (n, 0) if n >= 2 => b,
            (0, n) if n >= 2 => a,
            _ => continue,
        };
        if !out.contains(&other) {
            out.push(other);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::seam::{Hit, HitSource};
    use crate::importance::Role;
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
                role: None,
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

    /// A user and an assistant, as an agent's messages are stored: no
    /// label in the text, the role beside it.
    fn by_role() -> Vec<Ranked> {
        let mut out = vec![
            said(
                "m2",
                HitSource::Message,
                "The backup job can run nightly.",
                1.0,
            ),
            said(
                "m1",
                HitSource::Message,
                "I want the backup job nightly.",
                0.7,
            ),
            said("m3", HitSource::Message, "Nightly it is.", 0.4),
        ];
        for (r, role) in out
            .iter_mut()
            .zip([Role::Assistant, Role::User, Role::Assistant])
        {
            r.hit.role = Some(role);
        }
        out
    }

    #[test]
    fn asking_what_i_said_raises_the_users_turns() {
        for q in [
            "What did I mention about the backup job?",
            "In which order did I bring up the backup job throughout our conversations?",
        ] {
            let out = said_by_the_one_named(q, by_role());
            assert_eq!(ids(&out), ["m1", "m2", "m3"], "{q}");
            assert!((out[0].score - 0.7 * OWN_WORDS_BOOST).abs() < 1e-9);
        }
        // Chat exports label the turns in the text instead.
        let mut labelled = by_role();
        for r in &mut labelled {
            r.hit.text = format!("{}: {}", r.hit.role.take().unwrap(), r.hit.text);
        }
        let out = said_by_the_one_named("What did I mention about the backup job?", labelled);
        assert_eq!(ids(&out), ["m1", "m2", "m3"]);
    }

    #[test]
    fn a_first_person_question_about_the_world_is_left_alone() {
        for q in [
            "How often does my backup job run?",
            "What did they mention about the backup job?",
        ] {
            assert_eq!(
                ids(&said_by_the_one_named(q, by_role())),
                ["m2", "m1", "m3"],
                "{q}"
            );
        }
        // Without a user among the speakers, "I" names nobody.
        let mut two_people = chat();
        two_people.retain(|r| r.hit.source == HitSource::Message);
        let before = ids(&two_people).join(",");
        let out = said_by_the_one_named("What did I mention about my job?", two_people);
        assert_eq!(ids(&out).join(","), before);
    }

    #[test]
    fn a_role_names_its_speaker_when_the_text_has_no_label() {
        let out = said_by_the_one_named("What did the user want?", by_role());
        let score = |id: &str| out.iter().find(|r| r.hit.id == id).unwrap().score;
        assert!((score("m1") - 0.7 * SPEAKER_BOOST).abs() < 1e-9);
        assert_eq!(score("m2"), 1.0);
        assert_eq!(score("m3"), 0.4);
    }

    /// Two people whose labels are user names: "Emi" is called Kate, and
    /// calls "elise" Emily.
    fn by_user_names() -> Vec<Ranked> {
        [
            ("m1", "elise: Hey Kate! How was the ski trip?", 1.0),
            ("m2", "Emi: I booked a pottery class for Sunday.", 0.9),
            ("m3", "elise: Hi, Kate. My yoga class starts today.", 0.8),
            (
                "m4",
                "Emi: Thanks Emily! Skiing is my favourite sport.",
                0.7,
            ),
        ]
        .into_iter()
        .map(|(id, text, score)| said(id, HitSource::Message, text, score))
        .collect()
    }

    #[test]
    fn a_greeting_names_the_one_it_is_written_to() {
        assert_eq!(
            greeted("elise: Hey Kate! How was it?").as_deref(),
            Some("kate")
        );
        assert_eq!(greeted("Hi, Kate. Fine.").as_deref(), Some("kate"));
        assert_eq!(
            greeted("Kate Olsen: Thank you Ben!").as_deref(),
            Some("ben")
        );
        // Not a greeting: a longer word, a lower-case word, no name.
        assert_eq!(greeted("Ben: Highlights from Rome"), None);
        assert_eq!(greeted("Ben: hey there"), None);
        assert_eq!(greeted("Ben: Hey!"), None);
        // Bytes that change length when lower-cased do not shift the cut.
        assert_eq!(greeted("\u{212a}ey Kate"), None);
    }

    #[test]
    fn a_name_the_other_speaker_greets_names_the_speaker() {
        let out = said_by_the_one_named("What are Kate's hobbies?", by_user_names());
        assert_eq!(ids(&out), ["m2", "m1", "m4", "m3"]);
        let score = |id: &str| out.iter().find(|r| r.hit.id == id).unwrap().score;
        assert!((score("m2") - 0.9 * SPEAKER_BOOST).abs() < 1e-9);
        assert!((score("m4") - 0.7 * SPEAKER_BOOST).abs() < 1e-9);
        assert_eq!(score("m1"), 1.0);
        // Both named, one by label and one by what she is called: no cue.
        let out = said_by_the_one_named("Which cities have Kate and Elise seen?", by_user_names());
        assert_eq!(ids(&out), ["m1", "m2", "m3", "m4"]);
        // Emily is greeted once only: not enough to tell.
        let out = said_by_the_one_named("What does Emily teach?", by_user_names());
        assert_eq!(ids(&out), ["m1", "m2", "m3", "m4"]);
    }

    #[test]
    fn a_name_both_speakers_greet_is_nobodys_alias() {
        let mut both = by_user_names();
        both.push(said(
            "m5",
            HitSource::Message,
            "Emi: Hey Kate, it's me writing to myself?",
            0.1,
        ));
        let out = said_by_the_one_named("What are Kate's hobbies?", both);
        assert_eq!(ids(&out), ["m1", "m2", "m3", "m4", "m5"]);
    }

    #[test]
    fn speakers_are_the_first_words_of_the_labels() {
        let got = speakers_of([
            "Kate: hi",
            "Fahim Khan: hello\nNote: a second line",
            "no label here",
            "To do: not a person",
        ]);
        let want: HashSet<String> = ["kate", "fahim"].map(String::from).into();
        assert_eq!(got, want);
    }

    #[test]
    fn a_question_loses_only_the_speakers_names() {
        let speakers: HashSet<String> = ["kate", "nebraas"].map(String::from).into();
        for (q, want) in [
            ("What are Kate's hobbies?", "What are hobbies?"),
            (
                "Can Nebraas\u{2019}s girlfriend visit Kate?",
                "Can girlfriend visit",
            ),
            (
                "Did Kate and Ben meet in Rome?",
                "Did and Ben meet in Rome?",
            ),
            // A lower-case word is not a name; a question of names alone is kept.
            ("what does kate mean", "what does kate mean"),
            ("Kate?", "Kate?"),
        ] {
            assert_eq!(without_speakers(q, &speakers), want, "{q}");
        }
        assert!(matches!(
            without_speakers("What did Ben say?", &speakers),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            without_speakers("Kate's job?", &HashSet::new()),
            "Kate's job?"
        );
    }
}
