//! Search across every tier.

use std::sync::Arc;

use axum::Json;
use serde::Deserialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Params, Project, bad, blocking, limit, value};
use crate::AppState;
use crate::error::ServerError;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct SearchQuery {
    q: String,
    limit: Option<usize>,
}

/// `GET /search?q=words&limit=N`: every tier, best first.
#[utoipa::path(
    get,
    path = "/v1/projects/{project}/search",
    tag = "project",
    summary = "Search every tier, best first",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), SearchQuery),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn search(
    Project(m): Project,
    Params(q): Params<SearchQuery>,
) -> Result<Json<Value>, ServerError> {
    if q.q.trim().is_empty() {
        return Err(bad(
            "invalid_query",
            "q= is empty: give words to search for".into(),
        ));
    }
    let n = limit(q.limit, mnemon::SEARCH_LIMIT)?;
    blocking(move || value(&m.search(&q.q, n)?)).await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(search))
}
