//! Entities (epics, stories, tasks): list, create, read, update, delete.

use std::sync::Arc;

use axum::Json;
use axum::response::Response;
use mnemon::{EntityChange, EntityKind, EntityQuery, NewEntity};
use serde::Deserialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{
    Body, MAX_PAGE, Params, Project, Segments, bad, blocking, created, limit, value, written,
};
use crate::AppState;
use crate::error::ServerError;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct EntitiesQuery {
    kind: Option<String>,
    status: Option<String>,
    parent: Option<u64>,
    limit: Option<usize>,
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/entities",
    tag = "project",
    summary = "Epics, stories and tasks, most urgent first",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), EntitiesQuery),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn entities(
    Project(m): Project,
    Params(q): Params<EntitiesQuery>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, MAX_PAGE)?;
    let kind = q
        .kind
        .as_deref()
        .map(str::parse::<EntityKind>)
        .transpose()
        .map_err(|e| bad("invalid_kind", e.to_string()))?;
    let status = q
        .status
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: String| bad("invalid_status", e))?;
    blocking(move || {
        value(&m.entities(&EntityQuery {
            kind,
            status,
            parent: q.parent,
            limit: Some(n),
        })?)
    })
    .await
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewEntityBody {
    /// epic, story or task.
    kind: String,
    title: String,
    description: Option<String>,
    /// 1 (most urgent) to 5.
    priority: Option<u8>,
    parent: Option<u64>,
    agent: Option<String>,
}

fn entity_priority(p: Option<u8>) -> Result<Option<u8>, ServerError> {
    match p {
        Some(p) if !(1..=5).contains(&p) => Err(bad(
            "invalid_priority",
            format!("priority {p} is out of range: give 1 (most urgent) to 5"),
        )),
        p => Ok(p),
    }
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/entities",
    tag = "project",
    summary = "Create an epic, story or task",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = NewEntityBody,
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn create_entity(
    Project(m): Project,
    Body(b): Body<NewEntityBody>,
) -> Result<Response, ServerError> {
    let kind: EntityKind = b.kind.parse().map_err(|e: String| bad("invalid_kind", e))?;
    let priority = entity_priority(b.priority)?;
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).create_entity(&NewEntity {
            kind,
            title: b.title,
            description: b.description,
            priority,
            parent: b.parent,
        })?;
        Ok(created(written(&out)?))
    })
    .await
}

fn number(raw: &str) -> Result<u64, ServerError> {
    raw.trim_start_matches('#').parse().map_err(|_| {
        bad(
            "invalid_number",
            format!("`{raw}` is not an entity number: give the number shown as #N"),
        )
    })
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/entities/{number}",
    tag = "project",
    summary = "One entity",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("number" = String, Path, description = "the entity's number (`15` or `#15`)")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn entity(
    Project(m): Project,
    Segments((_, raw)): Segments<(String, String)>,
) -> Result<Json<Value>, ServerError> {
    let n = number(&raw)?;
    blocking(move || value(&m.entity(n)?)).await
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EntityUpdate {
    title: Option<String>,
    description: Option<String>,
    /// todo, in_progress, blocked, done...
    status: Option<String>,
    priority: Option<u8>,
    agent: Option<String>,
}

#[utoipa::path(
    patch,
    path = "/v1/projects/{project}/entities/{number}",
    tag = "project",
    summary = "Change an entity",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("number" = String, Path, description = "the entity's number")),
    request_body = EntityUpdate,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn update_entity(
    Project(m): Project,
    Segments((_, raw)): Segments<(String, String)>,
    Body(b): Body<EntityUpdate>,
) -> Result<Json<Value>, ServerError> {
    let n = number(&raw)?;
    let status = b
        .status
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: String| bad("invalid_status", e))?;
    let priority = entity_priority(b.priority)?;
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).update_entity(
            n,
            &EntityChange {
                title: b.title,
                description: b.description,
                status,
                priority,
            },
        )?;
        Ok(Json(written(&out)?))
    })
    .await
}

#[utoipa::path(
    delete,
    path = "/v1/projects/{project}/entities/{number}",
    tag = "project",
    summary = "Delete an entity",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("number" = String, Path, description = "the entity's number")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn delete_entity(
    Project(m): Project,
    Segments((_, raw)): Segments<(String, String)>,
) -> Result<Json<Value>, ServerError> {
    let n = number(&raw)?;
    blocking(move || Ok(Json(written(&m.delete_entity(n)?)?))).await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(entities, create_entity))
        .routes(routes!(entity, update_entity, delete_entity))
}
