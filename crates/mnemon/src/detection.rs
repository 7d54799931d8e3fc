//! What window detection found: the model server's own account of the
//! window it serves (`llm.rs` probes it; a build without the `llm`
//! feature finds nothing), and anything to tell the user about it.

/// What window detection found, and anything to tell the user.
#[derive(Debug, Clone, Default)]
pub(crate) struct Detection {
    pub detected: Option<mnemon_core::setup::Detected>,
    pub notes: Vec<String>,
}
