//! The best context that fits a budget.

use std::sync::Arc;

use axum::Json;
use mnemon::{ContextQuery, Format};
use serde::Deserialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Body, Project, blocking, internal};
use crate::AppState;
use crate::error::ServerError;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContextBody {
    budget: Option<u64>,
    query: Option<String>,
    preset: Option<String>,
    format: Option<String>,
    agent: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/context",
    tag = "project",
    summary = "The best context that fits the budget exactly",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = ContextBody,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn context(
    Project(m): Project,
    Body(b): Body<ContextBody>,
) -> Result<Json<Value>, ServerError> {
    let format: Format =
        b.format
            .as_deref()
            .unwrap_or("markdown")
            .parse()
            .map_err(|e: String| ServerError::BadRequest {
                code: "invalid_format",
                message: e,
            })?;
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).context(&ContextQuery {
            budget: b.budget,
            preset: b.preset.unwrap_or_else(|| mnemon::DEFAULT_PRESET.into()),
            query: b.query,
            format,
            messages_before: None,
        })?;
        Ok(Json(serde_json::to_value(out).map_err(internal)?))
    })
    .await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(context))
}
