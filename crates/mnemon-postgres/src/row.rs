//! PostgreSQL's rows read through core's [`Columns`], so the row kinds both
//! SQL backends share are decoded once (`mnemon_core::store::sql`). A
//! column of another type than the schema's is a broken schema, which the
//! driver reports by panicking, as everywhere else in this crate.

use std::convert::Infallible;

use mnemon_core::memory::{Message, Operation};
use mnemon_core::store::sql::{self, Columns};
use tokio_postgres::Row;

pub(crate) struct Cols<'a>(pub(crate) &'a Row);

impl Columns for Cols<'_> {
    type Error = Infallible;
    fn int(&self, i: usize) -> Result<i64, Infallible> {
        Ok(self.0.get(i))
    }
    fn maybe_int(&self, i: usize) -> Result<Option<i64>, Infallible> {
        Ok(self.0.get(i))
    }
    fn real(&self, i: usize) -> Result<f64, Infallible> {
        Ok(self.0.get(i))
    }
    fn flag(&self, i: usize) -> Result<bool, Infallible> {
        Ok(self.0.get(i))
    }
    fn text(&self, i: usize) -> Result<String, Infallible> {
        Ok(self.0.get(i))
    }
    fn maybe_text(&self, i: usize) -> Result<Option<String>, Infallible> {
        Ok(self.0.get(i))
    }
}

/// A value of a read that cannot fail.
pub(crate) fn sure<T>(r: Result<T, Infallible>) -> T {
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

pub(crate) fn op_from_row(r: &Row) -> Operation {
    sure(sql::operation(&Cols(r)))
}

pub(crate) fn msg_from_row(r: &Row) -> Message {
    sure(sql::message(&Cols(r)))
}
