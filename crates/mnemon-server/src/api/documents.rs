//! Episodic documents, rendered from the database.

use std::sync::Arc;

use axum::Json;
use serde::Deserialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Params, Project, Segments, bad, blocking, value};
use crate::AppState;
use crate::error::ServerError;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct VersionQuery {
    version: Option<u64>,
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/documents/{kind}",
    tag = "project",
    summary = "An episodic document (current or a version)",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("kind" = String, Path, description = "project_state, work_plan or decision_log"), VersionQuery),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn document(
    Project(m): Project,
    Segments((_, kind)): Segments<(String, String)>,
    Params(q): Params<VersionQuery>,
) -> Result<Json<Value>, ServerError> {
    let kind = kind
        .parse()
        .map_err(|e: String| bad("invalid_document", e))?;
    blocking(move || value(&m.document(kind, q.version)?)).await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(document))
}
