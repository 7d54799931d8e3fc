//! Working memory (tier 1): the most recent operations, verbatim, bounded
//! by count and by tokens, oldest out first. It is a view of the store, so
//! a restart rebuilds it exactly with [`WorkingMemory::rebuild`].

use std::collections::VecDeque;

use super::types::Operation;

#[derive(Debug, Clone, PartialEq)]
pub struct WorkingMemory {
    max_operations: usize,
    max_tokens: u64,
    ops: VecDeque<Operation>,
    tokens: u64,
}

impl WorkingMemory {
    pub fn new(max_operations: usize, max_tokens: u64) -> Self {
        WorkingMemory {
            max_operations: max_operations.max(1),
            max_tokens: max_tokens.max(1),
            ops: VecDeque::new(),
            tokens: 0,
        }
    }

    /// Rebuilt from operations given most recent first (as the store returns them).
    pub fn rebuild(max_operations: usize, max_tokens: u64, recent_first: &[Operation]) -> Self {
        let mut wm = WorkingMemory::new(max_operations, max_tokens);
        for op in recent_first.iter().rev() {
            wm.push(op.clone());
        }
        wm
    }

    /// Adds the newest operation and returns the ones evicted, oldest first.
    /// The newest operation always stays, even when alone it is over budget.
    #[allow(
        clippy::expect_used,
        reason = "invariants of this function, not outside input: non-empty"
    )]
    pub fn push(&mut self, op: Operation) -> Vec<Operation> {
        self.tokens += op.tokens;
        self.ops.push_back(op);
        let mut evicted = Vec::new();
        while self.ops.len() > 1
            && (self.ops.len() > self.max_operations || self.tokens > self.max_tokens)
        {
            let old = self.ops.pop_front().expect("non-empty");
            self.tokens -= old.tokens;
            evicted.push(old);
        }
        evicted
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// Most recent first.
    pub fn recent(&self) -> impl Iterator<Item = &Operation> {
        self.ops.iter().rev()
    }

    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Operation> {
        self.recent().filter(move |o| o.kind == kind)
    }

    /// Operations whose type or data contain every word of `query`, ignoring case.
    pub fn search(&self, query: &str) -> Vec<&Operation> {
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        self.recent()
            .filter(|o| {
                let hay = format!("{} {}", o.kind, o.data).to_lowercase();
                words.iter().all(|w| hay.contains(w))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::types::Timestamp;
    use proptest::prelude::*;

    fn op(seq: i64, tokens: u64, kind: &str) -> Operation {
        Operation {
            id: format!("op{seq}"),
            seq,
            session_id: None,
            agent: "a".into(),
            kind: kind.into(),
            data: serde_json::json!({"n": seq}),
            tokens,
            phase: None,
            status: None,
            importance: 0.5,
            pinned: false,
            created_at: Timestamp(seq),
        }
    }

    #[test]
    fn evicts_oldest_by_count_and_by_tokens() {
        let mut wm = WorkingMemory::new(3, 100);
        for i in 0..3 {
            assert!(wm.push(op(i, 10, "x")).is_empty());
        }
        let out = wm.push(op(3, 10, "x"));
        assert_eq!(out.iter().map(|o| o.seq).collect::<Vec<_>>(), vec![0]);
        let out = wm.push(op(4, 85, "y"));
        assert_eq!(out.iter().map(|o| o.seq).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(wm.recent().map(|o| o.seq).collect::<Vec<_>>(), vec![4, 3]);
        assert_eq!(wm.tokens(), 95);
        assert_eq!(wm.of_kind("y").count(), 1);
        assert_eq!(wm.search("Y 4").len(), 1);
    }

    #[test]
    fn an_oversized_newest_operation_stays() {
        let mut wm = WorkingMemory::new(5, 10);
        wm.push(op(0, 5, "x"));
        let out = wm.push(op(1, 50, "x"));
        assert_eq!(out.len(), 1);
        assert_eq!(wm.len(), 1);
    }

    proptest! {
        /// Rebuilding from the store's recent operations gives the same
        /// working memory as pushing them one by one.
        #[test]
        fn rebuild_equals_incremental(tokens in proptest::collection::vec(1u64..50, 0..60), max_ops in 1usize..20, max_tokens in 1u64..300) {
            let ops: Vec<_> = tokens.iter().enumerate().map(|(i, t)| op(i as i64, *t, "x")).collect();
            let mut inc = WorkingMemory::new(max_ops, max_tokens);
            for o in &ops {
                inc.push(o.clone());
            }
            let recent_first: Vec<_> = ops.iter().rev().cloned().collect();
            let rebuilt = WorkingMemory::rebuild(max_ops, max_tokens, &recent_first);
            prop_assert_eq!(&inc, &rebuilt);
            prop_assert!(inc.len() <= max_ops);
            prop_assert!(inc.len() <= 1 || inc.tokens() <= max_tokens);
        }
    }
}
