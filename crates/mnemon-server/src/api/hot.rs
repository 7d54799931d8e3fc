//! The hot context: goals, constraints and remembered facts, with versions.

use std::sync::Arc;

use axum::Json;
use axum::http::HeaderMap;
use axum::response::Response;
use mnemon::{HotItemChange, HotKind, HotStatus, Priority};
use serde::Deserialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Body, Project, Segments, bad, blocking, created, written};
use crate::AppState;
use crate::error::ServerError;

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/hot",
    tag = "project",
    summary = "The hot context: goals, constraints, remembered facts, with versions",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn hot(Project(m): Project) -> Result<Json<Value>, ServerError> {
    blocking(move || Ok(Json(m.hot()?.to_json()))).await
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewHot {
    /// `goal`, `constraint` or `note` (what `mnemon remember` keeps).
    kind: String,
    text: String,
    priority: Option<String>,
    parent: Option<String>,
    agent: Option<String>,
}

fn priority(p: Option<&str>) -> Result<Option<Priority>, ServerError> {
    p.map(str::parse)
        .transpose()
        .map_err(|e: String| bad("invalid_priority", e))
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/hot",
    tag = "project",
    summary = "Add a goal, constraint or remembered fact",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = NewHot,
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn add_hot(
    Project(m): Project,
    Body(b): Body<NewHot>,
) -> Result<Response, ServerError> {
    let kind = match b.kind.as_str() {
        "goal" => HotKind::Goal,
        "constraint" => HotKind::Constraint,
        "note" | "remember" => HotKind::Note,
        other => {
            return Err(bad(
                "invalid_kind",
                format!("kind `{other}` is not one to add here: use goal, constraint or note"),
            ));
        }
    };
    let priority = priority(b.priority.as_deref())?;
    blocking(move || {
        let m = m.with_agent(b.agent.as_deref());
        let out = m.add_hot(kind, &b.text, priority, b.parent.as_deref())?;
        Ok(created(written(&out)?))
    })
    .await
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HotUpdate {
    text: Option<String>,
    priority: Option<String>,
    /// pending, in-progress, complete (goals) or active, removed.
    status: Option<String>,
    agent: Option<String>,
}

/// `If-Match: 3` or `If-Match: "3"`: the version the client read.
fn if_match(headers: &HeaderMap) -> Result<Option<u64>, ServerError> {
    match headers.get(axum::http::header::IF_MATCH) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .ok()
            .map(|s| s.trim().trim_matches('"'))
            .and_then(|s| s.parse().ok())
            .map(Some)
            .ok_or_else(|| {
                bad(
                    "invalid_if_match",
                    "If-Match must be the item's version number, as read".into(),
                )
            }),
    }
}

#[utoipa::path(
    patch,
    path = "/v1/projects/{project}/hot/{id}",
    tag = "project",
    summary = "Change a hot item; `If-Match: <version>` makes a stale update a 409 with the current item",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "the hot item's id or a unique prefix")),
    request_body = HotUpdate,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn update_hot(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
    headers: HeaderMap,
    Body(b): Body<HotUpdate>,
) -> Result<Response, ServerError> {
    let version = if_match(&headers)?;
    let status = b
        .status
        .as_deref()
        .map(|s| {
            HotStatus::parse(s).ok_or_else(|| {
                bad(
                    "invalid_status",
                    format!("status `{s}`: use pending, in-progress, complete, active or removed"),
                )
            })
        })
        .transpose()?;
    let priority = priority(b.priority.as_deref())?;
    blocking(move || {
        let m = m.with_agent(b.agent.as_deref());
        let out = m.update_hot(
            &id,
            version,
            HotItemChange {
                text: b.text,
                priority,
                status,
                ..HotItemChange::default()
            },
        )?;
        Ok(axum::response::IntoResponse::into_response(Json(written(
            &out,
        )?)))
    })
    .await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(hot, add_hot))
        .routes(routes!(update_hot))
}
