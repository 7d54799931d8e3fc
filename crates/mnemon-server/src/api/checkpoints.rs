//! Checkpoints: list, create, read one, resume from one.

use std::sync::Arc;

use axum::Json;
use axum::response::Response;
use serde_json::{Value, json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{AgentOnly, Body, Limit, Params, Project, Segments, blocking, created, limit, written};
use crate::AppState;
use crate::error::ServerError;

/// A checkpoint named by a client: an id (`CP-20260101-120000-2`), never
/// a path, so a request cannot make the server read its files.
pub(crate) fn checkpoint_id(id: &str) -> Result<String, ServerError> {
    let id = id.trim();
    if id.is_empty()
        || id.len() > 64
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(ServerError::BadRequest {
            code: "invalid_checkpoint",
            message: format!(
                "`{id}` is not a checkpoint id: give one as listed (CP-YYYYmmdd-HHMMSS), not a path"
            ),
        });
    }
    Ok(id.to_string())
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/checkpoints",
    tag = "project",
    summary = "Checkpoints, newest first",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), Limit),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn checkpoints(
    Project(m): Project,
    Params(q): Params<Limit>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, mnemon::LIST_LIMIT)?;
    blocking(move || {
        let parsed: Vec<Value> = m
            .checkpoints(n)?
            .iter()
            .filter_map(|c| serde_json::from_str(&c.json).ok())
            .collect();
        Ok(Json(json!(parsed)))
    })
    .await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/checkpoints",
    tag = "project",
    summary = "Create a checkpoint now",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = AgentOnly,
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn create_checkpoint(
    Project(m): Project,
    Body(b): Body<AgentOnly>,
) -> Result<Response, ServerError> {
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).checkpoint("manual")?;
        Ok(created(written(&out)?))
    })
    .await
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/checkpoints/{id}",
    tag = "project",
    summary = "One checkpoint, as its file is written",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "CP-YYYYmmdd-HHMMSS")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn checkpoint(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
) -> Result<Json<Value>, ServerError> {
    let id = checkpoint_id(&id)?;
    blocking(move || {
        let stored = m.stored_checkpoint(&id)?;
        let v: Value = serde_json::from_str(&stored.json).map_err(|e| {
            ServerError::Internal(format!("checkpoint {id} is stored damaged: {e}"))
        })?;
        Ok(Json(v))
    })
    .await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/checkpoints/{id}/resume",
    tag = "project",
    summary = "Restore working memory, hot context and window from a checkpoint",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "CP-YYYYmmdd-HHMMSS")),
    request_body = super::AgentOnly,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn resume(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
    Body(b): Body<AgentOnly>,
) -> Result<Json<Value>, ServerError> {
    let id = checkpoint_id(&id)?;
    blocking(move || {
        let m = m.with_agent(b.agent.as_deref());
        let (out, cp) = m.resume_from(&id)?;
        let mut v = written(&out)?;
        v["resume_instructions"] = json!(cp.resume_instructions);
        Ok(Json(v))
    })
    .await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(checkpoints, create_checkpoint))
        .routes(routes!(checkpoint))
        .routes(routes!(resume))
}
