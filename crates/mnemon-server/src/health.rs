//! Liveness, readiness and the API document.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::AppState;
use crate::api::blocking;
use crate::auth::authorized_any;
use crate::error::ServerError;

/// Alive: answers without a token, for supervisors.
#[utoipa::path(get, path = "/healthz", tag = "server",
    responses((status = 200, description = "the process serves", body = Object)))]
pub(crate) async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// Ready when the default project's store answers. Needs a token, as
/// every route but `/healthz` does.
#[utoipa::path(get, path = "/readyz", tag = "server",
    responses((status = 200, description = "the store answers", body = Object),
              (status = 401, description = "no valid token", body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn readyz(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Json<Value>, ServerError> {
    authorized_any(&state, &headers).await?;
    blocking(move || {
        let m = state.projects.get(crate::DEFAULT)?;
        m.status()?;
        Ok(Json(json!({"status": "ready"})))
    })
    .await
}
