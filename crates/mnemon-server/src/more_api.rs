//! The rest of what the CLI does, over HTTP: search, messages, entities,
//! single sessions, decisions and checkpoints, resume, compact, optimize,
//! the episodic documents and the event stream.

use std::sync::Arc;

use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use mnemon::{EntityChange, EntityKind, EntityQuery, MessageQuery, NewEntity};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::api::{
    Body, Params, Project, Segments, blocking, checkpoint_id, created, limit, written,
};
use crate::error::ServerError;
use crate::memory_api::{AgentOnly, value};

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/v1/projects/{project}/search", get(search))
        .route(
            "/v1/projects/{project}/messages",
            get(messages).post(crate::api::message),
        )
        .route(
            "/v1/projects/{project}/entities",
            get(entities).post(create_entity),
        )
        .route(
            "/v1/projects/{project}/entities/{number}",
            get(entity).patch(update_entity).delete(delete_entity),
        )
        .route("/v1/projects/{project}/decisions/{id}", get(decision))
        .route("/v1/projects/{project}/sessions/{id}", get(session))
        .route(
            "/v1/projects/{project}/sessions/{id}/restore",
            post(restore_session),
        )
        .route("/v1/projects/{project}/checkpoints/{id}", get(checkpoint))
        .route(
            "/v1/projects/{project}/checkpoints/{id}/resume",
            post(resume),
        )
        .route("/v1/projects/{project}/compact", post(compact))
        .route("/v1/projects/{project}/forget", post(forget))
        .route("/v1/projects/{project}/optimize", post(optimize))
        .route("/v1/projects/{project}/documents/{kind}", get(document))
        .route("/v1/projects/{project}/events", get(crate::events::events))
}

fn bad(code: &'static str, message: String) -> ServerError {
    ServerError::BadRequest { code, message }
}

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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
    let n = limit(q.limit, 20)?;
    blocking(move || value(&m.search(&q.q, n)?)).await
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct MessagesQuery {
    limit: Option<usize>,
    session: Option<String>,
    search: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/messages",
    tag = "project",
    summary = "Recent messages",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), MessagesQuery),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn messages(
    Project(m): Project,
    Params(q): Params<MessagesQuery>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, 20)?;
    blocking(move || {
        value(&m.messages(&MessageQuery {
            session_id: q.session,
            keywords: q.search,
            limit: Some(n),
        })?)
    })
    .await
}

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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn entities(
    Project(m): Project,
    Params(q): Params<EntitiesQuery>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, 100)?;
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
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn delete_entity(
    Project(m): Project,
    Segments((_, raw)): Segments<(String, String)>,
) -> Result<Json<Value>, ServerError> {
    let n = number(&raw)?;
    blocking(move || Ok(Json(written(&m.delete_entity(n)?)?))).await
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/decisions/{id}",
    tag = "project",
    summary = "One decision record",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "the decision's id (DR-...)")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn decision(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || value(&m.decision(&id)?)).await
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/sessions/{id}",
    tag = "project",
    summary = "One session",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "the session's id or a unique prefix")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn session(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || value(&m.session(Some(&id))?)).await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/sessions/{id}/restore",
    tag = "project",
    summary = "Make an archived session the agent's active one again",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "the session's id")),
    request_body = crate::memory_api::AgentOnly,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn restore_session(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
    Body(b): Body<AgentOnly>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).restore_session(&id)?;
        Ok(Json(written(&out)?))
    })
    .await
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/checkpoints/{id}",
    tag = "project",
    summary = "One checkpoint, as its file is written",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "CP-YYYYmmdd-HHMMSS")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn checkpoint(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
) -> Result<Json<Value>, ServerError> {
    let id = checkpoint_id(&id)?;
    blocking(move || {
        let stored = m.stored_checkpoint(&id)?;
        let v: Value = serde_json::from_str(&stored.json).map_err(|e| {
            ServerError::Internal(format!("checkpoint {id} is stored damaged: {e}"))
        })?;
        Ok(Json(v))
    })
    .await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/checkpoints/{id}/resume",
    tag = "project",
    summary = "Restore working memory, hot context and window from a checkpoint",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), ("id" = String, Path, description = "CP-YYYYmmdd-HHMMSS")),
    request_body = crate::memory_api::AgentOnly,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn resume(
    Project(m): Project,
    Segments((_, id)): Segments<(String, String)>,
    Body(b): Body<AgentOnly>,
) -> Result<Json<Value>, ServerError> {
    let id = checkpoint_id(&id)?;
    blocking(move || {
        let m = m.with_agent(b.agent.as_deref());
        let (out, cp) = m.resume_from(&id)?;
        let mut v = written(&out)?;
        v["resume_instructions"] = json!(cp.resume_instructions);
        Ok(Json(v))
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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
    responses((status = 200, description = "what was forgotten (ids), or would be with dry_run", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix; nothing was forgotten", body = crate::openapi::ErrorBody)),
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
