use mnemon::OpenOptions;
use serde_json::{Value, json};

use super::*;
use crate::proxy::wire::{Wire, parse};

/// A 2,048-token window, as a small local model serves it, and summaries
/// made at once: the proxy's decisions alone, with no upstream.
const SMALL_WINDOW: &str = "[context_window]\nauto_detect = false\nmax_tokens = 2048\n\n[proxy]\nsummary = \"extractive\"\n";

/// What an agent would have been answered: a fixed sentence per turn, so
/// the conversation grows as a real one does.
fn answer(turn: usize) -> String {
    format!("Turn {turn} answered: a short fact, and why it matters to people in towns today.")
}

/// Runs a conversation through the proxy's decisions, one request per
/// user turn, answers recorded as the proxy records them. Returns each
/// request's body as it would go upstream, with whether it was compacted.
fn converse(m: &Mnemon, questions: &[String]) -> Vec<(String, bool)> {
    let proxy = m.settings().loaded().config.proxy.clone();
    let mut conv = Conversation::default();
    let mut messages = vec![json!({"role": "system", "content": "You are a helpful assistant."})];
    let mut sent = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        messages.push(json!({"role": "user", "content": q}));
        let body = json!({"model": "m", "max_tokens": 24, "messages": messages});
        let req = parse(Wire::OpenAi, body.to_string().as_bytes()).unwrap();
        let talk: Vec<&Turn> = req.turns.iter().filter(|t| !t.standing).collect();
        let seqs = record_new(m, "proxy test", &mut conv, &talk).unwrap();
        let out = outgoing(m, &proxy, 512, &mut conv, &req, &seqs, "test", None).unwrap();
        let reply = answer(i + 1);
        record_answer(m, &mut conv, out.request_hash, &reply, None, 0).unwrap();
        messages.push(json!({"role": "assistant", "content": reply}));
        sent.push((String::from_utf8(out.body).unwrap(), out.compacted));
    }
    sent
}

fn topics(n: usize) -> Vec<String> {
    let topics = [
        "rivers", "bread", "trains", "owls", "glass", "chess", "tea", "maps",
    ];
    (1..=n)
        .map(|turn| {
            let t = topics[turn % topics.len()];
            format!(
                "Turn {turn}: tell me one fact about {t}, and why {t} matter to people in towns."
            )
        })
        .collect()
}

/// The memory blocks of an upstream body: the compaction's, then the
/// retrieval for the request's own question.
fn blocks(body: &str) -> usize {
    let v: Value = serde_json::from_str(body).unwrap();
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("<mnemon-memory"))
        })
        .count()
}

#[test]
fn every_compacted_request_carries_the_retrieval_for_its_question() {
    let m = OpenOptions::new().in_memory(Some(SMALL_WINDOW)).unwrap();
    let sent = converse(&m, &topics(90));
    let compacted: Vec<usize> = (0..sent.len()).filter(|&i| sent[i].1).collect();
    assert!(
        compacted.len() > 40,
        "90 turns outgrow a 2,048-token window: {} compacted",
        compacted.len()
    );
    let without: Vec<usize> = compacted
        .iter()
        .copied()
        .filter(|&i| blocks(&sent[i].0) < 2)
        .map(|i| i + 1)
        .collect();
    assert!(
        without.is_empty(),
        "turns sent without retrieval for their question: {without:?}"
    );
}

#[test]
fn a_fact_of_turn_two_is_sent_with_its_question_whenever_it_is_asked() {
    // Asked at each turn of a whole compaction cycle, so the question falls
    // on every place between two compactions, the last one before the next
    // among them. By turn 140 the summary no longer holds the fact: only
    // the retrieval for the question brings it.
    for last in 140..=148 {
        let m = OpenOptions::new().in_memory(Some(SMALL_WINDOW)).unwrap();
        let mut questions = topics(last - 1);
        questions[1] = "Please remember this: my locker code is 4417.".into();
        questions.push("What is my locker code?".into());
        let sent = converse(&m, &questions);
        let (body, compacted) = sent.last().unwrap();
        assert!(compacted, "turn {last} is compacted");
        assert!(
            body.contains("4417"),
            "the fact of turn 2 is sent with its question at turn {last}"
        );
    }
}
