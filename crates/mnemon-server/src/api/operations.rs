//! Operations: record one, list them.

use std::sync::Arc;

use axum::Json;
use axum::response::Response;
use mnemon::{NewOperation, OperationQuery};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Body, Params, Project, blocking, created, internal, limit, written};
use crate::AppState;
use crate::error::ServerError;

/// `mnemon record`'s body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordBody {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    data: Option<Value>,
    agent: Option<String>,
    tokens: Option<u64>,
    phase: Option<String>,
    status: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/operations",
    tag = "project",
    summary = "Record an operation (durable when answered)",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = RecordBody,
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn record(
    Project(m): Project,
    Body(b): Body<RecordBody>,
) -> Result<Response, ServerError> {
    let phase = b
        .phase
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: String| ServerError::BadRequest {
            code: "invalid_phase",
            message: e,
        })?;
    blocking(move || {
        let m = m.with_agent(b.agent.as_deref());
        let out = m.record(NewOperation {
            kind: b.kind,
            data: b.data.unwrap_or_else(|| json!({})),
            tokens: b.tokens,
            phase,
            agent: b.agent,
            status: b.status,
        })?;
        Ok(created(written(&out)?))
    })
    .await
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct OperationsQuery {
    limit: Option<usize>,
    #[serde(rename = "type")]
    kind: Option<String>,
    search: Option<String>,
    session: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/operations",
    tag = "project",
    summary = "Recent operations, newest first",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), OperationsQuery),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn operations(
    Project(m): Project,
    Params(q): Params<OperationsQuery>,
) -> Result<Json<Value>, ServerError> {
    let limit = limit(q.limit, mnemon::LIST_LIMIT)?;
    blocking(move || {
        let ops = m.recent(&OperationQuery {
            session_id: q.session,
            kind: q.kind,
            keywords: q.search,
            limit: Some(limit),
        })?;
        Ok(Json(serde_json::to_value(ops).map_err(internal)?))
    })
    .await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(operations, record))
}
