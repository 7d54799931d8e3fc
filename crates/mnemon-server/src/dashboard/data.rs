//! What the dashboard reads beyond the agents' API: the agents a project
//! has seen, an agent's window over time, and the compaction audits. They
//! are plain JSON routes with the same tokens, so a script can draw the same
//! charts.

use std::sync::Arc;

use axum::Json;
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::api::{Limit, Params, Project, blocking, limit, value};
use crate::error::ServerError;

/// How far back the agents are looked for.
const AGENTS_LOOKBACK: usize = 2_000;

/// The dashboard's data routes, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(agents))
        .routes(routes!(timeline))
        .routes(routes!(compactions))
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/agents",
    tag = "project",
    summary = "The agents seen in the project's recent operations and messages, each with its status",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn agents(Project(m): Project) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let mut out = Vec::new();
        for agent in m.agents(AGENTS_LOOKBACK)? {
            let report = m.with_agent(Some(&agent)).report()?;
            out.push(json!({"agent": agent, "status": report}));
        }
        Ok(Json(json!({"agents": out})))
    })
    .await
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct TimelineQuery {
    agent: Option<String>,
    /// Log entries to go back over (default 500).
    limit: Option<usize>,
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/timeline",
    tag = "project",
    summary = "An agent's window over its recent log entries: usage and epoch per entry, with markers for checkpoints, refreshes (with their compaction audit) and optimizations",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), TimelineQuery),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn timeline(
    Project(m): Project,
    Params(q): Params<TimelineQuery>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, 500)?;
    blocking(move || value(&m.with_agent(q.agent.as_deref()).timeline(n)?)).await
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/compactions",
    tag = "project",
    summary = "Compaction audits, newest first: what each kept, summarized and dropped, and where each original stays",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), Limit),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn compactions(
    Project(m): Project,
    Params(q): Params<Limit>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, 20)?;
    blocking(move || value(&m.compactions(n)?)).await
}
