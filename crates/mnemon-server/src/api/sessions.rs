//! Sessions: list, start, end, read one, restore an archived one.

use std::sync::Arc;

use axum::Json;
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{
    AgentOnly, Body, Limit, Params, Project, Segments, blocking, created, limit, value, written,
};
use crate::AppState;
use crate::error::ServerError;

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/sessions",
    tag = "project",
    summary = "Sessions, most recently active first",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), Limit),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn sessions(
    Project(m): Project,
    Params(q): Params<Limit>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, mnemon::LIST_LIMIT)?;
    blocking(move || value(&m.sessions(n)?)).await
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StartSession {
    title: Option<String>,
    agent: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/sessions",
    tag = "project",
    summary = "Start a session for an agent",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = StartSession,
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn start_session(
    Project(m): Project,
    Body(b): Body<StartSession>,
) -> Result<Response, ServerError> {
    blocking(move || {
        let out = m
            .with_agent(b.agent.as_deref())
            .start_session(b.title.as_deref())?;
        Ok(created(written(&out)?))
    })
    .await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/sessions/end",
    tag = "project",
    summary = "End the agent's session: checkpoint, summary, archive, fresh window",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = AgentOnly,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn end_session(
    Project(m): Project,
    Body(b): Body<AgentOnly>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).end_session(None)?;
        Ok(Json(written(&out)?))
    })
    .await
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/sessions/{id}",
    tag = "project",
    summary = "One session",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "the session's id or a unique prefix")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn session(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || value(&m.session(Some(&id))?)).await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/sessions/{id}/restore",
    tag = "project",
    summary = "Make an archived session the agent's active one again",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "the session's id")),
    request_body = super::AgentOnly,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn restore_session(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
    Body(b): Body<AgentOnly>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).restore_session(&id)?;
        Ok(Json(written(&out)?))
    })
    .await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(sessions, start_session))
        .routes(routes!(end_session))
        .routes(routes!(session))
        .routes(routes!(restore_session))
}
