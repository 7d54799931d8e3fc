//! One file per subcommand.

pub mod config;
pub mod init;
pub mod models;
pub mod status;
pub mod tokens;
