//! The agent's window: its status, a refresh, usage its provider reported,
//! compaction and optimization.

use std::sync::Arc;

use axum::Json;
use serde::Deserialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{AgentOnly, AgentQuery, Body, Params, Project, blocking, internal, value, written};
use crate::AppState;
use crate::error::ServerError;

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/status",
    tag = "project",
    summary = "Window, zone, recommended action and profile of an agent",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), AgentQuery),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn status(
    Project(m): Project,
    Params(q): Params<AgentQuery>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let report = m.with_agent(q.agent.as_deref()).report()?;
        Ok(Json(serde_json::to_value(report).map_err(internal)?))
    })
    .await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/refresh",
    tag = "project",
    summary = "Refresh the live context: checkpoint, summarize, new epoch",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = AgentOnly,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn refresh(
    Project(m): Project,
    Body(b): Body<AgentOnly>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).refresh()?;
        Ok(Json(written(&out)?))
    })
    .await
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Usage {
    prompt_tokens: u64,
    agent: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/report-usage",
    tag = "project",
    summary = "Tell mnemon the prompt tokens your provider reported",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = Usage,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn report_usage(
    Project(m): Project,
    Body(b): Body<Usage>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        value(
            &m.with_agent(b.agent.as_deref())
                .report_usage(b.prompt_tokens)?,
        )
    })
    .await
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DryRun {
    #[serde(default)]
    dry_run: bool,
    agent: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/compact",
    tag = "project",
    summary = "Compress the session log; pinned items stay verbatim",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = DryRun,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn compact(
    Project(m): Project,
    Body(b): Body<DryRun>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).compact(b.dry_run)?;
        Ok(Json(written(&out)?))
    })
    .await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/optimize",
    tag = "project",
    summary = "Shrink the live context",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = DryRun,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn optimize(
    Project(m): Project,
    Body(b): Body<DryRun>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).optimize(b.dry_run)?;
        Ok(Json(written(&out)?))
    })
    .await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(refresh))
        .routes(routes!(report_usage))
        .routes(routes!(compact))
        .routes(routes!(optimize))
}
