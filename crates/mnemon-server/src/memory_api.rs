//! The hot context, sessions, decisions, checkpoints and window actions
//! over HTTP. A hot-item update names the version it read in `If-Match`;
//! a stale one is answered 409 with the item as it is now.

use std::sync::Arc;

use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{get, patch, post};
use axum::{Json, Router};
use mnemon::{HotItemChange, HotKind, HotStatus, NewDecision, Priority};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::api::{Body, Params, Project, Segments, blocking, created, internal, limit, written};
use crate::error::ServerError;

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/v1/projects/{project}/hot", get(hot).post(add_hot))
        .route("/v1/projects/{project}/hot/{id}", patch(update_hot))
        .route(
            "/v1/projects/{project}/decisions",
            get(decisions).post(decide),
        )
        .route(
            "/v1/projects/{project}/sessions",
            get(sessions).post(start_session),
        )
        .route("/v1/projects/{project}/sessions/end", post(end_session))
        .route(
            "/v1/projects/{project}/checkpoints",
            get(checkpoints).post(checkpoint),
        )
        .route("/v1/projects/{project}/refresh", post(refresh))
        .route("/v1/projects/{project}/report-usage", post(report_usage))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentOnly {
    /// The agent acting (default: the server's).
    pub(crate) agent: Option<String>,
}

/// Any answer as JSON.
pub(crate) fn value<T: serde::Serialize>(v: &T) -> Result<Json<Value>, ServerError> {
    Ok(Json(serde_json::to_value(v).map_err(internal)?))
}

fn bad(code: &'static str, message: String) -> ServerError {
    ServerError::BadRequest { code, message }
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/hot",
    tag = "project",
    summary = "The hot context: goals, constraints, remembered facts, with versions",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct Limit {
    pub(crate) limit: Option<usize>,
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/decisions",
    tag = "project",
    summary = "Decision records, newest first",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), Limit),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn decisions(
    Project(m): Project,
    Params(q): Params<Limit>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, 50)?;
    blocking(move || value(&m.decisions(Some(n))?)).await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/decisions",
    tag = "project",
    summary = "Record a decision (ADR): title, context, decision, consequences, alternatives, assumptions, status; optional agent",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body(content = Object, content_type = "application/json"),
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
    path = "/v1/projects/{project}/sessions",
    tag = "project",
    summary = "Sessions, most recently active first",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), Limit),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn sessions(
    Project(m): Project,
    Params(q): Params<Limit>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, 50)?;
    blocking(move || value(&m.sessions(n)?)).await
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StartSession {
    title: Option<String>,
    agent: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/sessions",
    tag = "project",
    summary = "Start a session for an agent",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = StartSession,
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn start_session(
    Project(m): Project,
    Body(b): Body<StartSession>,
) -> Result<Response, ServerError> {
    blocking(move || {
        let out = m
            .with_agent(b.agent.as_deref())
            .start_session(b.title.as_deref())?;
        Ok(created(written(&out)?))
    })
    .await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/sessions/end",
    tag = "project",
    summary = "End the agent's session: checkpoint, summary, archive, fresh window",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = AgentOnly,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn end_session(
    Project(m): Project,
    Body(b): Body<AgentOnly>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).end_session(None)?;
        Ok(Json(written(&out)?))
    })
    .await
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/checkpoints",
    tag = "project",
    summary = "Checkpoints, newest first",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), Limit),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn checkpoints(
    Project(m): Project,
    Params(q): Params<Limit>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, 20)?;
    blocking(move || {
        let parsed: Vec<Value> = m
            .checkpoints(n)?
            .iter()
            .filter_map(|c| serde_json::from_str(&c.json).ok())
            .collect();
        Ok(Json(json!(parsed)))
    })
    .await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/checkpoints",
    tag = "project",
    summary = "Create a checkpoint now",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = AgentOnly,
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn checkpoint(
    Project(m): Project,
    Body(b): Body<AgentOnly>,
) -> Result<Response, ServerError> {
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).checkpoint("manual")?;
        Ok(created(written(&out)?))
    })
    .await
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/refresh",
    tag = "project",
    summary = "Refresh the live context: checkpoint, summarize, new epoch",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = AgentOnly,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn refresh(
    Project(m): Project,
    Body(b): Body<AgentOnly>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let out = m.with_agent(b.agent.as_deref()).refresh()?;
        Ok(Json(written(&out)?))
    })
    .await
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Usage {
    prompt_tokens: u64,
    agent: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/report-usage",
    tag = "project",
    summary = "Tell mnemon the prompt tokens your provider reported",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = Usage,
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn report_usage(
    Project(m): Project,
    Body(b): Body<Usage>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        value(
            &m.with_agent(b.agent.as_deref())
                .report_usage(b.prompt_tokens)?,
        )
    })
    .await
}
