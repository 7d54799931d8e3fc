//! PostgreSQL errors as the store's errors: a full disk, a refused
//! privilege or an unreachable server each get a message that says what
//! to do.

use mnemon_core::memory::StoreError;
use tokio_postgres::error::SqlState;

pub(crate) fn map_err(shown: &str, e: tokio_postgres::Error) -> StoreError {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        if *code == SqlState::DISK_FULL {
            return StoreError::DiskFull;
        }
        if *code == SqlState::INSUFFICIENT_PRIVILEGE || *code == SqlState::READ_ONLY_SQL_TRANSACTION
        {
            return StoreError::ReadOnly {
                path: shown.to_string(),
                reason: format!(
                    "{} (grant the user CREATE and write privileges on the schema, or use another database)",
                    db.message()
                ),
            };
        }
        if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            return StoreError::Backend(format!(
                "{shown}: {}. Set the password in PGPASSWORD or ~/.pgpass; mnemon never writes it out",
                db.message()
            ));
        }
        return StoreError::Backend(format!("{shown}: {}", db.message()));
    }
    if e.is_closed() {
        return StoreError::Backend(format!(
            "{shown}: the connection to PostgreSQL closed; retry once the server is back"
        ));
    }
    StoreError::Backend(format!(
        "cannot reach PostgreSQL at {shown}: {e}. Check that the server runs and the URL is right"
    ))
}
