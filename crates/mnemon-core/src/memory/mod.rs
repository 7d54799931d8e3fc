//! Memory: what mnemon remembers and the rules for remembering it.
//!
//! Types and the storage seam live here; backends live in their own crates
//! (`mnemon-sqlite`). [`Memory`] applies the domain rules on every write:
//! exact token counts, importance, pinning, no raw reasoning.

mod decision;
mod entities;
pub mod episodic;
pub mod handle;
mod hot;
pub mod privacy;
mod redact;
mod service;
pub mod session_log;
mod store;
pub mod transfer;
mod types;
mod working;

pub use decision::{
    Alternative, Consequences, DecisionError, DecisionRecord, DecisionStatus, NewDecision,
    decision_id, drawn_decision_id, slug,
};
pub use entities::{
    Entity, EntityChange, EntityDraft, EntityKind, EntityQuery, EntityStatus, NewEntity,
    StatusCount,
};
pub use episodic::{DocKind, Document};
pub use handle::{HandleKind, IdLookup, like_prefix, resolve_id};
pub use hot::{HotContext, HotItem, HotItemChange, HotItemDraft, HotKind, HotStatus, Priority};
pub use redact::{PatternError, Redactor};
pub use service::{Memory, RestoredSession, data_text};
pub use store::{
    Atomically, DecisionStore, DocumentStore, EntityStore, Health, HotStore, OperationLog,
    SessionStore, Store, StoreError, StoreResult,
};
pub use store::{DocumentDraft, HotItemUpdate, Page, SessionDraft, StatusWrite};
pub use types::{
    Clock, Message, MessageDraft, MessageQuery, NewMessage, NewOperation, Operation,
    OperationDraft, OperationQuery, Phase, Session, SessionChange, SessionStatus, Timestamp,
};
pub use working::WorkingMemory;
