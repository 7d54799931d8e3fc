//! One error type for every verb, with a class that tells a caller (and
//! the CLI's exit code) what kind of failure it was.

use mnemon_core::engine::EngineError;
use mnemon_core::memory::StoreError;

/// What went wrong, typed, so an interface can answer in its own terms
/// (an exit code, an HTTP status, an MCP error) without reading messages.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No `.mnemon/` where one was needed.
    #[error("no .mnemon/ in {0} or any parent directory; run `mnemon init` in your project first")]
    NoProject(String),
    #[error(transparent)]
    /// The configuration is invalid: every problem, with file and line.
    Config(#[from] mnemon_core::config::ConfigErrors),
    #[error(transparent)]
    /// The configured model, window or chat format cannot be resolved.
    Setup(#[from] mnemon_core::setup::SetupError),
    #[error(transparent)]
    /// A context plan or preset is unknown or invalid.
    Plan(#[from] mnemon_core::assemble::PlanError),
    #[error(transparent)]
    /// A checkpoint file is damaged, edited or of an unknown format.
    Checkpoint(#[from] mnemon_core::engine::CheckpointError),
    #[error(transparent)]
    /// The engine refused or could not finish an action.
    Engine(EngineError),
    #[error(transparent)]
    /// The store refused a write or failed.
    Store(StoreError),
    /// The project's database is gone, empty or another project's: its
    /// history would be lost by going on.
    #[error("{0}")]
    Lost(String),
    /// The model server failed, refused or could not be reached. Nothing
    /// that depended on its answer was stored.
    #[cfg(feature = "llm")]
    #[error(transparent)]
    Llm(#[from] mnemon_llm::LlmError),
    /// A value given by the caller that is not usable, with what to do.
    #[error("{0}")]
    Input(String),
    /// A number outside what a request allows (a budget, a limit), with
    /// the range to give. Adapters name the field from `what`.
    #[error("{what} {value} is out of range: give {min} to {max}{unit}")]
    OutOfRange {
        /// The request's field, as its adapters name it (`budget`).
        what: &'static str,
        /// The number given.
        value: u64,
        /// The least allowed.
        min: u64,
        /// The most allowed.
        max: u64,
        /// What is counted, with its leading space (` tokens`), or empty.
        unit: &'static str,
    },
    /// A file or directory mnemon could not read or write.
    #[error("{what}: {error}")]
    Io {
        /// What mnemon was doing, naming the path.
        what: String,
        /// What the operating system said.
        error: std::io::Error,
    },
}

/// The kind of failure, for exit codes and status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Bad input, configuration or environment: fix it and run again.
    Input,
    /// The store or the filesystem failed (full disk, damaged or read-only
    /// file, a newer or foreign database): nothing was written.
    Storage,
    /// Someone else changed the same thing first (a stale version): read
    /// it again and reapply the change. Nothing was written.
    Conflict,
    /// The model server failed or could not be reached; nothing that
    /// depended on its answer was written.
    Llm,
}

impl ErrorClass {
    /// The class as machine output names it (`--json` errors).
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Input => "input",
            ErrorClass::Storage => "storage",
            ErrorClass::Conflict => "conflict",
            ErrorClass::Llm => "llm",
        }
    }

    /// The CLI's exit code: 1 input, 3 storage, 4 conflict, 5 the model
    /// server (2 is clap's usage error, 0 success).
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorClass::Input => 1,
            ErrorClass::Storage => 3,
            ErrorClass::Conflict => 4,
            ErrorClass::Llm => 5,
        }
    }
}

impl Error {
    /// Which kind of failure this is.
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Store(e) | Error::Engine(EngineError::Store(e)) => store_class(e),
            Error::Engine(EngineError::Conflict(_)) => ErrorClass::Conflict,
            Error::Io { .. } | Error::Lost(_) => ErrorClass::Storage,
            #[cfg(feature = "llm")]
            Error::Llm(
                mnemon_llm::LlmError::Config(_) | mnemon_llm::LlmError::MissingKey { .. },
            ) => ErrorClass::Input,
            #[cfg(feature = "llm")]
            Error::Llm(_) => ErrorClass::Llm,
            _ => ErrorClass::Input,
        }
    }

    pub(crate) fn io(what: impl Into<String>, error: std::io::Error) -> Error {
        Error::Io {
            what: what.into(),
            error,
        }
    }
}

fn store_class(e: &StoreError) -> ErrorClass {
    match e {
        StoreError::NotFound { .. } | StoreError::Ambiguous { .. } | StoreError::Invalid(_) => {
            ErrorClass::Input
        }
        StoreError::Conflict { .. } | StoreError::StateConflict { .. } => ErrorClass::Conflict,
        StoreError::Foreign { .. }
        | StoreError::NewerSchema { .. }
        | StoreError::Corrupt { .. }
        | StoreError::ReadOnly { .. }
        | StoreError::DiskFull
        | StoreError::Backend(_) => ErrorClass::Storage,
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        Error::Store(e)
    }
}

impl From<EngineError> for Error {
    fn from(e: EngineError) -> Error {
        match e {
            EngineError::Store(s)
            | EngineError::Embed(mnemon_core::assemble::semantic::EmbedError::Store(s)) => {
                Error::Store(s)
            }
            EngineError::Checkpoint(c) => Error::Checkpoint(c),
            other => Error::Engine(other),
        }
    }
}

/// A result with this crate's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
