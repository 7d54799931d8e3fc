//! SQLite errors as the store's errors: a full disk, a read-only file or a
//! damaged database each get a message that says what to do.

use mnemon_core::memory::StoreError;
use rusqlite::ErrorCode;

pub(crate) fn map_err(path: &str, e: rusqlite::Error) -> StoreError {
    if let rusqlite::Error::SqliteFailure(f, msg) = &e {
        let detail = msg.clone().unwrap_or_else(|| f.to_string());
        return match f.code {
            ErrorCode::DiskFull => StoreError::DiskFull,
            ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied => {
                StoreError::ReadOnly {
                    path: path.to_string(),
                    reason: format!(
                        "{detail} (check that the file and its directory are writable)"
                    ),
                }
            }
            ErrorCode::NotADatabase => StoreError::Foreign {
                path: path.to_string(),
                reason: "it is not an SQLite database file".into(),
            },
            ErrorCode::DatabaseCorrupt => StoreError::Corrupt {
                path: path.to_string(),
                reason: detail,
            },
            _ => StoreError::Backend(format!("{path}: {detail}")),
        };
    }
    StoreError::Backend(format!("{path}: {e}"))
}
