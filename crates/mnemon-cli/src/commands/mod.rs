//! One file per subcommand.

pub mod chat;
pub mod checkpoint;
pub mod config;
pub mod context;
pub mod decision;
pub mod doc;
pub mod eval;
pub mod forget;
pub mod hot;
pub mod import;
pub mod init;
pub mod llm;
pub mod log;
pub mod maintenance;
pub mod models;
pub mod optimize;
pub mod reindex;
pub mod serve;
pub mod session;
pub mod shell;
pub mod status;
pub mod tokens;
