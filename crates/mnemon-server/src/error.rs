//! Errors as JSON: `{"error": {"code": "...", "message": "..."}}` with a
//! stable `code` a client can branch on and a message that says what to fix.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use utoipa::ToSchema;

/// What went wrong with a request.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The request is malformed or a value is not allowed.
    #[error("{message}")]
    BadRequest {
        /// A stable name for the problem.
        code: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// No token, or one the server does not know.
    #[error("{0}")]
    Unauthorized(String),
    /// A valid credential, but not allowed for this request (a
    /// cookie-authenticated write without the dashboard's header).
    #[error("{0}")]
    Forbidden(String),
    /// The project does not exist, or the token does not open it.
    #[error("{0}")]
    NotFound(String),
    /// Someone changed the item first; nothing was written.
    #[error("{0}")]
    Conflict(String),
    /// The version named in `If-Match` is stale: `current` is the item as
    /// it is now, to reapply the change on.
    #[error("{message}")]
    Stale {
        /// What happened and what to do.
        message: String,
        /// The item as it is now.
        current: serde_json::Value,
    },
    /// The store failed (full disk, damaged file); nothing was written.
    #[error("{0}")]
    Storage(String),
    /// The model server failed or could not be reached.
    #[error("{0}")]
    Upstream(String),
    /// A bug or an unreadable server file.
    #[error("{0}")]
    Internal(String),
}

impl From<mnemon::Error> for ServerError {
    fn from(e: mnemon::Error) -> ServerError {
        use mnemon::ErrorClass;
        use mnemon_core::memory::StoreError;
        let message = e.to_string();
        match (&e, e.class()) {
            (mnemon::Error::Store(StoreError::Conflict { current, .. }), _) => ServerError::Stale {
                message,
                current: serde_json::to_value(current).unwrap_or_default(),
            },
            (mnemon::Error::Store(StoreError::NotFound { .. }), _) => {
                ServerError::NotFound(message)
            }
            (mnemon::Error::OutOfRange { what, .. }, _) => ServerError::BadRequest {
                code: match *what {
                    "budget" => "invalid_budget",
                    "limit" => "invalid_limit",
                    _ => "invalid_input",
                },
                message,
            },
            (_, ErrorClass::Input) => ServerError::BadRequest {
                code: "invalid_input",
                message,
            },
            (_, ErrorClass::Conflict) => ServerError::Conflict(message),
            (_, ErrorClass::Storage) => ServerError::Storage(message),
            (_, ErrorClass::Llm) => ServerError::Upstream(message),
        }
    }
}

impl ServerError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ServerError::BadRequest { code, .. } => (StatusCode::BAD_REQUEST, code),
            ServerError::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ServerError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            ServerError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ServerError::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            ServerError::Stale { .. } => (StatusCode::CONFLICT, "stale_version"),
            ServerError::Storage(_) => (StatusCode::SERVICE_UNAVAILABLE, "storage"),
            ServerError::Upstream(_) => (StatusCode::BAD_GATEWAY, "llm"),
            ServerError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

impl IntoResponse for ServerError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        if status.is_server_error() {
            tracing::error!(code, error = %self, "request failed");
        }
        let mut body = json!({"error": {"code": code, "message": self.to_string()}});
        if let ServerError::Stale { current, .. } = self {
            body["current"] = current;
        }
        (status, Json(body)).into_response()
    }
}

/// Every error: a stable code and a message that says what to fix.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct ErrorBody {
    error: ErrorDetail,
    /// On 409 `stale_version`: the item as it is now.
    current: Option<serde_json::Value>,
}

/// The error itself.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct ErrorDetail {
    /// Stable, for programs: `unauthorized`, `not_found`, `invalid_body`,
    /// `invalid_budget`, `stale_version`...
    code: String,
    /// For people: what is wrong and how to fix it.
    message: String,
}
