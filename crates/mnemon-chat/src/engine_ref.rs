//! How a chat holds its engine.

use mnemon_core::engine::Engine;

/// The engine a chat drives: borrowed for a chat that lives inside a
/// caller's scope, shared for one that a server task or a library handle
/// keeps for as long as it likes.
pub(crate) enum EngineRef<'e, S: ?Sized> {
    Borrowed(&'e Engine<S>),
    Shared(std::sync::Arc<Engine<S>>),
}

impl<S: ?Sized> std::ops::Deref for EngineRef<'_, S> {
    type Target = Engine<S>;
    fn deref(&self) -> &Engine<S> {
        match self {
            EngineRef::Borrowed(e) => e,
            EngineRef::Shared(e) => e,
        }
    }
}
