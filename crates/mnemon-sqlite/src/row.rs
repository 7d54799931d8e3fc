//! SQLite's rows read through core's [`Columns`], so the row kinds both SQL
//! backends share are decoded once (`mnemon_core::store::sql`).

use mnemon_core::memory::{Message, Operation};
use mnemon_core::store::sql::{self, Columns};
use rusqlite::Row;

pub(crate) struct Cols<'a, 'r>(pub(crate) &'a Row<'r>);

impl Columns for Cols<'_, '_> {
    type Error = rusqlite::Error;
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.0.get(i)
    }
    fn maybe_int(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        self.0.get(i)
    }
    fn real(&self, i: usize) -> rusqlite::Result<f64> {
        self.0.get(i)
    }
    fn flag(&self, i: usize) -> rusqlite::Result<bool> {
        self.0.get(i)
    }
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.0.get(i)
    }
    fn maybe_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.0.get(i)
    }
}

pub(crate) fn op_from_row(r: &Row<'_>) -> rusqlite::Result<Operation> {
    sql::operation(&Cols(r))
}

pub(crate) fn msg_from_row(r: &Row<'_>) -> rusqlite::Result<Message> {
    sql::message(&Cols(r))
}
