//! Forgetting: records, messages, hot items, decisions or sessions, gone
//! everywhere, with an audit of ids and counts.

use std::sync::Arc;

use axum::Json;
use serde::Deserialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Body, Project, bad, blocking, value};
use crate::AppState;
use crate::error::ServerError;

/// What to forget: the same targets `mnemon forget` takes.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ForgetBody {
    /// `o12` (an operation), `m7` (a message), `DR-…` (a decision), or the id or unique
    /// prefix of an operation, message, hot item or ended session.
    #[serde(default)]
    targets: Vec<String>,
    /// Phrases: every record, message, hot item and decision whose text holds one.
    #[serde(default)]
    matching: Vec<String>,
    #[serde(default)]
    dry_run: bool,
    agent: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/forget",
    tag = "project",
    summary = "Forget records, messages, hot items, decisions or ended sessions everywhere they are held; the audit keeps ids, never content",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = ForgetBody,
    responses((status = 200, description = "what was forgotten (ids), or would be with dry_run", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix; nothing was forgotten", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn forget(
    Project(m): Project,
    Body(b): Body<ForgetBody>,
) -> Result<Json<Value>, ServerError> {
    if b.targets.is_empty() && b.matching.is_empty() {
        return Err(bad(
            "targets",
            "`targets` and `matching` are empty: name what to forget (`o12`, `m7`, `DR-…`, an id) or give a phrase".into(),
        ));
    }
    blocking(move || {
        let out = m
            .with_agent(b.agent.as_deref())
            .forget(&b.targets, &b.matching, b.dry_run)?;
        value(&out)
    })
    .await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(forget))
}
