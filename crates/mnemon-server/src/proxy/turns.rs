//! Which conversation a request belongs to, and which of its turns are new.
//!
//! A chat client sends the whole conversation with every request. The
//! proxy records each turn once: the turns a request shares with what is
//! recorded already are recognized by their text, wherever the client's
//! history starts (clients drop or summarize their oldest turns), and a
//! retried request adds nothing.

use std::hash::{DefaultHasher, Hash, Hasher};

use mnemon::Role;
use sha2::{Digest, Sha256};

/// A turn as compared: its role and its words, spacing aside.
pub fn turn_hash(role: Role, text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    role.name().hash(&mut h);
    for word in text.split_whitespace() {
        word.hash(&mut h);
    }
    h.finish()
}

/// How far back a retried request may end behind what is recorded: the
/// answer to it (and, at most, one more turn).
const RETRY_SLACK: usize = 2;

/// The number of leading turns of `request` that are recorded already
/// (`request[..n]`), the rest being new.
///
/// The request's known part ends where the longest run of its turns
/// matches the end of `recorded`, or the end but for the last one or two
/// (a retry of a request whose answer was recorded). A run that matches
/// nothing means every turn is new.
pub fn known_prefix(recorded: &[u64], request: &[u64]) -> usize {
    let mut best = (0usize, 0usize);
    for slack in 0..=RETRY_SLACK.min(recorded.len()) {
        let r = &recorded[..recorded.len() - slack];
        for end in 1..=request.len() {
            let run = request[..end]
                .iter()
                .rev()
                .zip(r.iter().rev())
                .take_while(|(a, b)| a == b)
                .count();
            if run > best.0 || (run == best.0 && run > 0 && end > best.1) {
                best = (run, end);
            }
        }
    }
    best.1
}

/// A conversation's name: the client's own (`x-mnemon-session`, then
/// OpenAI's `user` or Anthropic's `metadata.user_id`), else a fingerprint
/// of its system prompt and first user turn, which every request of one
/// conversation repeats.
pub fn conversation_id(named: Option<&str>, system: &str, first_user: &str) -> String {
    if let Some(n) = named.map(str::trim).filter(|n| !n.is_empty()) {
        return n.to_string();
    }
    let mut h = Sha256::new();
    h.update(system.as_bytes());
    h.update([0]);
    h.update(first_user.as_bytes());
    let d = h.finalize();
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The mnemon agent a conversation is kept as: its own window, session
/// and working memory in the project. Names that are not plain words are
/// hashed, so any client string makes a safe agent name.
pub fn agent_name(conversation: &str) -> String {
    let plain = conversation.len() <= 48
        && conversation
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.');
    if plain {
        format!("proxy-{conversation}")
    } else {
        format!("proxy-{}", conversation_id(None, conversation, ""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(words: &[&str]) -> Vec<u64> {
        words.iter().map(|w| turn_hash(Role::User, w)).collect()
    }

    #[test]
    fn only_what_follows_the_recorded_turns_is_new() {
        let recorded = h(&["a", "b", "c", "reply"]);
        // The next request: everything, the answer, and a new turn.
        assert_eq!(
            known_prefix(&recorded, &h(&["a", "b", "c", "reply", "d"])),
            4
        );
        // A retry of the request that was answered.
        assert_eq!(known_prefix(&recorded, &h(&["a", "b", "c"])), 3);
        // The client dropped its oldest turns.
        assert_eq!(known_prefix(&recorded, &h(&["c", "reply", "d"])), 2);
        // The client put its own summary in front.
        assert_eq!(known_prefix(&recorded, &h(&["summary", "reply", "d"])), 2);
        // A conversation never seen.
        assert_eq!(known_prefix(&recorded, &h(&["x", "y"])), 0);
        assert_eq!(known_prefix(&[], &h(&["x"])), 0);
    }

    #[test]
    fn spacing_does_not_make_a_turn_new() {
        assert_eq!(
            turn_hash(Role::User, "a  b\n"),
            turn_hash(Role::User, "a b")
        );
        assert_ne!(
            turn_hash(Role::User, "a b"),
            turn_hash(Role::Assistant, "a b")
        );
    }

    #[test]
    fn conversations_are_named_safely() {
        assert_eq!(conversation_id(Some(" c-1 "), "s", "u"), "c-1");
        let fp = conversation_id(None, "You are terse.", "Hello");
        assert_eq!(fp.len(), 16);
        assert_eq!(fp, conversation_id(None, "You are terse.", "Hello"));
        assert_ne!(fp, conversation_id(None, "You are terse.", "Hi"));
        assert_eq!(agent_name("c-1"), "proxy-c-1");
        assert!(agent_name("../../etc/passwd").starts_with("proxy-"));
        assert!(!agent_name("../../etc/passwd").contains('/'));
    }
}
