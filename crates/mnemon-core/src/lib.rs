//! mnemon-core: the domain of mnemon, with no IO.
//!
//! mnemon tells an LLM orchestrator how full its context window is, what to
//! send, and what to remember. This crate owns the parts of that which are
//! pure computation: exact token counting ([`tokens`]), the model registry
//! ([`models`]), the context window and its zones ([`window`]), the
//! optimization profiles ([`profile`]) and the configuration schema
//! ([`config`]).
//!
//! It must never touch SQLite, HTTP, the filesystem, the environment or the
//! clock: callers read files and variables and pass their contents in, so
//! every rule here is testable in isolation and the same on every backend.
//! `tests/no_io.rs` enforces this.

pub mod assemble;
mod cache;
pub mod compress;
pub mod config;
pub mod engine;
pub mod importance;
pub mod memory;
pub mod models;
pub mod optimize;
pub mod profile;
pub mod runtime;
pub mod setup;
pub mod store;
pub mod text;
pub mod tokens;
pub mod window;
