//! Short handles: `o12` an operation, `m7` a message, `h3` a hot-context
//! item. A handle is the row's position in the store, so it is unique by
//! construction, unlike a prefix of a time-ordered UUID (two operations
//! recorded in the same millisecond share their first 13 characters).
//! Every surface prints handles and accepts them wherever it accepts an id;
//! long ids and unique prefixes stay accepted.

use super::{HotItem, Message, Operation};

/// What a handle's letter names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleKind {
    Operation,
    Message,
    Hot,
}

impl HandleKind {
    pub fn letter(self) -> char {
        match self {
            HandleKind::Operation => 'o',
            HandleKind::Message => 'm',
            HandleKind::Hot => 'h',
        }
    }

    /// The kind whose rows a backend keeps in `table` (both backends name
    /// their tables alike), so one id resolver serves every table.
    pub fn of_table(table: &str) -> Option<HandleKind> {
        match table {
            "operations" => Some(HandleKind::Operation),
            "messages" => Some(HandleKind::Message),
            "hot_items" => Some(HandleKind::Hot),
            _ => None,
        }
    }

    /// `o12` for position 12.
    pub fn handle(self, seq: i64) -> String {
        format!("{}{seq}", self.letter())
    }

    /// The position `text` names when it is this kind's handle (`h3` -> 3).
    /// A UUID never parses: it has a hyphen and more than one letter.
    pub fn position(self, text: &str) -> Option<i64> {
        let rest = text.trim().strip_prefix(self.letter())?;
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        rest.parse::<i64>().ok().filter(|n| *n > 0)
    }
}

impl Operation {
    pub fn handle(&self) -> String {
        HandleKind::Operation.handle(self.seq)
    }
}

impl Message {
    pub fn handle(&self) -> String {
        HandleKind::Message.handle(self.seq)
    }
}

impl HotItem {
    pub fn handle(&self) -> String {
        HandleKind::Hot.handle(self.seq as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn handles_parse_back_and_ids_never_do() {
        assert_eq!(HandleKind::Hot.position("h3"), Some(3));
        assert_eq!(HandleKind::Operation.position(" o12 "), Some(12));
        assert_eq!(HandleKind::Operation.position("m12"), None);
        assert_eq!(HandleKind::Operation.position("o0"), None);
        assert_eq!(HandleKind::Operation.position("o+1"), None);
        assert_eq!(HandleKind::Hot.position("h"), None);
        // A hex prefix of a UUIDv7 that happens to start with a letter.
        assert_eq!(HandleKind::Hot.position("019a2b3c-4d5e"), None);
    }

    proptest! {
        #[test]
        fn every_handle_names_its_position(seq in 1i64..i64::MAX) {
            for k in [HandleKind::Operation, HandleKind::Message, HandleKind::Hot] {
                prop_assert_eq!(k.position(&k.handle(seq)), Some(seq));
            }
        }
    }
}
