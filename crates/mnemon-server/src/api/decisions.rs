//! Decision records: list, decide, read one.

use std::sync::Arc;

use axum::Json;
use axum::response::Response;
use mnemon::NewDecision;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{
    Body, Limit, MAX_PAGE, Params, Project, Segments, bad, blocking, created, limit, value, written,
};
use crate::AppState;
use crate::error::ServerError;

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/decisions",
    tag = "project",
    summary = "Decision records, newest first",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), Limit),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn decisions(
    Project(m): Project,
    Params(q): Params<Limit>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, MAX_PAGE)?;
    blocking(move || value(&m.decisions(Some(n))?)).await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/decisions",
    tag = "project",
    summary = "Record a decision (ADR): title, context, decision, consequences, alternatives, assumptions, status; optional agent",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body(content = Object, content_type = "application/json"),
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn decide(
    Project(m): Project,
    Body(mut record): Body<Value>,
) -> Result<Response, ServerError> {
    // `agent` says who decided; the rest is the ADR.
    let agent = record
        .as_object_mut()
        .and_then(|o| o.remove("agent"))
        .and_then(|a| a.as_str().map(str::to_string));
    let d = NewDecision::from_json(&record).map_err(|e| bad("invalid_decision", e.to_string()))?;
    blocking(move || {
        let out = m.with_agent(agent.as_deref()).decide(&d)?;
        Ok(created(written(&out)?))
    })
    .await
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/decisions/{id}",
    tag = "project",
    summary = "One decision record",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "the decision's id (DR-...)")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn decision(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || value(&m.decision(&id)?)).await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(decisions, decide))
        .routes(routes!(decision))
}
