//! What crosses between Python and the library: mnemon's exception
//! classes, and arguments parsed into the library's types (with the
//! library's rules, never a second copy of them).

use mnemon::ErrorClass;
use mnemon::mnemon_core::memory::{DecisionStatus, NewDecision};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use serde::Serialize;

create_exception!(
    mnemon,
    Error,
    PyException,
    "Every error mnemon raises; the subclass says its kind: InputError, StorageError, ConflictError or LlmError."
);
create_exception!(
    mnemon,
    InputError,
    Error,
    "A value, configuration or project that cannot be used: the message says what to change."
);
create_exception!(
    mnemon,
    StorageError,
    Error,
    "The store or the filesystem failed (full disk, damaged or read-only file): nothing was written."
);
create_exception!(
    mnemon,
    ConflictError,
    Error,
    "Someone else changed the same thing first (a stale version): read it again and reapply."
);
create_exception!(
    mnemon,
    LlmError,
    Error,
    "The model server failed or could not be reached; nothing that depended on its answer was stored."
);

/// The library's error as the exception of its class, with its message.
pub(crate) fn raise(e: mnemon::Error) -> PyErr {
    let msg = e.to_string();
    match e.class() {
        ErrorClass::Input => InputError::new_err(msg),
        ErrorClass::Storage => StorageError::new_err(msg),
        ErrorClass::Conflict => ConflictError::new_err(msg),
        ErrorClass::Llm => LlmError::new_err(msg),
    }
}

pub(crate) fn input(msg: impl Into<String>) -> PyErr {
    InputError::new_err(msg.into())
}

pub(crate) fn json<T: Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| Error::new_err(format!("could not encode a result: {e}")))
}

/// Runs `f` without the GIL and answers with its value's JSON.
pub(crate) fn call<T, F>(py: Python<'_>, f: F) -> PyResult<String>
where
    T: Serialize + Send,
    F: FnOnce() -> mnemon::Result<T> + Send,
{
    let v = py.detach(f).map_err(raise)?;
    json(&v)
}

/// A count or size from Python: negative numbers are refused by name.
pub(crate) fn unsigned(name: &str, v: Option<i64>) -> PyResult<Option<u64>> {
    match v {
        Some(n) if n < 0 => Err(input(format!("{name} must be zero or more, not {n}"))),
        Some(n) => Ok(Some(n as u64)),
        None => Ok(None),
    }
}

pub(crate) fn parse<T: std::str::FromStr>(name: &str, v: Option<&str>) -> PyResult<Option<T>>
where
    T::Err: std::fmt::Display,
{
    v.map(|s| s.parse::<T>().map_err(|e| input(format!("{name}: {e}"))))
        .transpose()
}

pub(crate) fn value(name: &str, text: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| input(format!("{name} is not JSON: {e}")))
}

pub(crate) fn new_decision(fields: &str, status: &str) -> PyResult<NewDecision> {
    let mut d: NewDecision =
        serde_json::from_str(fields).map_err(|e| input(format!("a decision record: {e}")))?;
    d.status = status
        .parse::<DecisionStatus>()
        .map_err(|e| input(format!("status: {e}")))?;
    Ok(d)
}
