//! The project's store: the embedded SQLite file, or a PostgreSQL database
//! shared by many machines (`[storage] url`), behind one trait object, so
//! engines, chat and the server are the same code over either and a new
//! backend is added without touching them (`mnemon_core::store` lists the
//! steps).

use std::sync::Arc;

pub use mnemon_core::store::Backend;

/// A handle on the project's database, whichever backend keeps it.
pub type AnyStore = Arc<dyn Backend>;
