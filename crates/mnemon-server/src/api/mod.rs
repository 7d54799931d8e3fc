//! The JSON API under `/v1/projects/{project}/`, one module per resource.
//! Every handler maps a request to one verb of the library handle; the
//! store's work runs on the blocking pool so the async workers keep
//! serving. A route and its OpenAPI entry are declared together
//! (`utoipa_axum::routes!` in each module's `routes`), so the document
//! cannot miss a route.

mod checkpoints;
mod context;
mod decisions;
mod documents;
mod entities;
mod extract;
mod forget;
mod hot;
mod messages;
mod operations;
mod search;
mod sessions;
mod window;

use std::sync::Arc;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::error::ServerError;

pub(crate) use checkpoints::checkpoint_id;
pub(crate) use extract::{Body, Params, Project, Segments};

/// Every route of the JSON API, with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .merge(window::routes())
        .merge(operations::routes())
        .merge(messages::routes())
        .merge(context::routes())
        .merge(hot::routes())
        .merge(decisions::routes())
        .merge(sessions::routes())
        .merge(checkpoints::routes())
        .merge(entities::routes())
        .merge(documents::routes())
        .merge(search::routes())
        .merge(forget::routes())
}

/// Runs blocking store work off the async workers.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ServerError> + Send + 'static,
) -> Result<T, ServerError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ServerError::Internal(format!("a request handler stopped: {e}")))?
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct AgentQuery {
    agent: Option<String>,
}

pub(crate) fn internal(e: serde_json::Error) -> ServerError {
    ServerError::Internal(format!("cannot encode the answer: {e}"))
}

pub(crate) fn created(value: Value) -> Response {
    (StatusCode::CREATED, Json(value)).into_response()
}

/// The stored record with the engine's events and the window after it, as
/// `mnemon record --json` prints it.
pub(crate) fn written<T: serde::Serialize>(w: &mnemon::Written<T>) -> Result<Value, ServerError> {
    w.to_json().map_err(internal)
}

/// The most items one response carries: a page of a listing, well below
/// the library's own limit (`mnemon::MAX_LIST`), so that no request makes
/// the server hold a whole log in memory at once.
pub(crate) const MAX_PAGE: usize = 10_000;

/// A list's `?limit=`, `default` when absent. Zero and the library's limits
/// are the library's to refuse (as `invalid_limit`); a page larger than
/// [`MAX_PAGE`] is this server's.
pub(crate) fn limit(l: Option<usize>, default: usize) -> Result<usize, ServerError> {
    let n = l.unwrap_or(default);
    if n > MAX_PAGE {
        return Err(ServerError::BadRequest {
            code: "invalid_limit",
            message: format!("limit={n} is out of range: give 1 to {MAX_PAGE}"),
        });
    }
    Ok(n)
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentOnly {
    /// The agent acting (default: the server's).
    pub(crate) agent: Option<String>,
}

/// Any answer as JSON.
pub(crate) fn value<T: serde::Serialize>(v: &T) -> Result<Json<Value>, ServerError> {
    Ok(Json(serde_json::to_value(v).map_err(internal)?))
}

fn bad(code: &'static str, message: String) -> ServerError {
    ServerError::BadRequest { code, message }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct Limit {
    pub(crate) limit: Option<usize>,
}
