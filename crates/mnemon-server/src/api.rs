//! The JSON API under `/v1/projects/{project}/`. Every handler maps a
//! request to one verb of the library handle; the SQLite work runs on the
//! blocking pool so the async workers keep serving.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, routing::get};
use mnemon::{ContextQuery, Format, Mnemon, NewMessage, NewOperation, OperationQuery, Role};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::AppState;
use crate::error::ServerError;

/// A JSON body whose problems are answered as JSON errors naming the fix.
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ServerError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(Body(v)),
            Err(r) => Err(rejection(r)),
        }
    }
}

fn rejection(r: JsonRejection) -> ServerError {
    let (code, hint) = match &r {
        JsonRejection::MissingJsonContentType(_) => (
            "content_type",
            "send the body as JSON with `Content-Type: application/json`",
        ),
        JsonRejection::JsonSyntaxError(_) => ("malformed_json", "the body is not valid JSON"),
        JsonRejection::JsonDataError(_) => (
            "invalid_body",
            "a field is missing, unknown or of the wrong type",
        ),
        _ => ("invalid_body", "the body could not be read"),
    };
    ServerError::BadRequest {
        code,
        message: format!("{hint}: {}", r.body_text()),
    }
}

/// A query string whose problems are answered as JSON errors.
pub struct Params<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Params<T> {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| Params(v))
            .map_err(|r| ServerError::BadRequest {
                code: "invalid_query",
                message: format!(
                    "the query string is not usable (an unknown, missing or mistyped parameter): {}",
                    r.body_text()
                ),
            })
    }
}

/// Path segments whose problems are answered as JSON errors.
pub struct Segments<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Segments<T> {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(v)| Segments(v))
            .map_err(|r| ServerError::BadRequest {
                code: "invalid_path",
                message: format!("a path segment is not usable: {}", r.body_text()),
            })
    }
}

/// The project a request names, opened, once its bearer token is checked:
/// no token or an unknown one is 401; a token of another project is 404,
/// as if the project did not exist.
pub struct Project(pub Mnemon);

impl FromRequestParts<Arc<AppState>> for Project {
    type Rejection = ServerError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, Self::Rejection> {
        #[derive(Deserialize)]
        struct Named {
            project: String,
        }
        let Path(Named { project }) = Path::<Named>::from_request_parts(parts, state)
            .await
            .map_err(|e| ServerError::BadRequest {
                code: "invalid_path",
                message: e.body_text(),
            })?;
        if bearer(&parts.headers).is_none()
            && let Some(token) = crate::dashboard::cookie_token(&parts.headers)
        {
            crate::dashboard::check_write(&parts.method, &parts.headers)?;
            return Ok(Project(open_for(state, token, Some(project)).await?));
        }
        Ok(Project(
            authorized(state, &parts.headers, Some(&project)).await?,
        ))
    }
}

/// The project a request may use: `project` when its bearer token is
/// scoped to it (`None`: the token's own project). No token or an unknown
/// one is 401; a token of another project is 404.
pub(crate) async fn authorized(
    state: &Arc<AppState>,
    headers: &axum::http::HeaderMap,
    project: Option<&str>,
) -> Result<Mnemon, ServerError> {
    let token = bearer(headers).ok_or_else(|| {
        ServerError::Unauthorized(
            "send `Authorization: Bearer <token>`; `mnemon token create --project P` makes one"
                .into(),
        )
    })?;
    open_for(state, token.to_string(), project.map(str::to_string)).await
}

/// The bearer token of a request, if it sends one.
pub(crate) fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

/// A token the server does not know, by bearer header or cookie.
pub(crate) fn unknown_token() -> ServerError {
    ServerError::Unauthorized(
        "this token is not known to the server; create one with `mnemon token create --project P`"
            .into(),
    )
}

/// The project `token` opens, when it is `project` (`None`: any).
pub(crate) async fn open_for(
    state: &Arc<AppState>,
    token: String,
    project: Option<String>,
) -> Result<Mnemon, ServerError> {
    let state = Arc::clone(state);
    blocking(move || match state.projects.tokens().project_of(&token)? {
        None => Err(unknown_token()),
        Some(p) if project.as_ref().is_some_and(|want| *want != p) => {
            Err(ServerError::NotFound(format!(
                "no project `{}` for this token",
                project.unwrap_or_default()
            )))
        }
        Some(p) => state.projects.get(&p),
    })
    .await
}

/// Any valid token, of any project: for the server's own routes.
pub(crate) async fn authorized_any(
    state: &Arc<AppState>,
    headers: &axum::http::HeaderMap,
) -> Result<(), ServerError> {
    authorized(state, headers, None).await.map(drop)
}

/// A checkpoint named by a client: an id (`CP-20260101-120000-2`), never
/// a path, so a request cannot make the server read its files.
pub(crate) fn checkpoint_id(id: &str) -> Result<String, ServerError> {
    let id = id.trim();
    if id.is_empty()
        || id.len() > 64
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(ServerError::BadRequest {
            code: "invalid_checkpoint",
            message: format!(
                "`{id}` is not a checkpoint id: give one as listed (CP-YYYYmmdd-HHMMSS), not a path"
            ),
        });
    }
    Ok(id.to_string())
}

/// Runs blocking store work off the async workers.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ServerError> + Send + 'static,
) -> Result<T, ServerError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ServerError::Internal(format!("a request handler stopped: {e}")))?
}

/// The routes of one project.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/v1/projects/{project}/status", get(status))
        .route(
            "/v1/projects/{project}/operations",
            get(operations).post(record),
        )
        .route(
            "/v1/projects/{project}/context",
            axum::routing::post(context),
        )
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct AgentQuery {
    agent: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/status",
    tag = "project",
    summary = "Window, zone, recommended action and profile of an agent",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), AgentQuery),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn status(
    Project(m): Project,
    Params(q): Params<AgentQuery>,
) -> Result<Json<Value>, ServerError> {
    blocking(move || {
        let report = m.with_agent(q.agent.as_deref()).report()?;
        Ok(Json(serde_json::to_value(report).map_err(internal)?))
    })
    .await
}

pub(crate) fn internal(e: serde_json::Error) -> ServerError {
    ServerError::Internal(format!("cannot encode the answer: {e}"))
}

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

pub(crate) fn created(value: Value) -> Response {
    (StatusCode::CREATED, Json(value)).into_response()
}

/// The stored record with the engine's events and the window after it, as
/// `mnemon record --json` prints it.
pub(crate) fn written<T: serde::Serialize>(w: &mnemon::Written<T>) -> Result<Value, ServerError> {
    w.to_json().map_err(internal)
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/operations",
    tag = "project",
    summary = "Record an operation (durable when answered)",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = RecordBody,
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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

/// The most items one request lists.
const MAX_LIST: usize = 10_000;

/// A list's `?limit=`, `default` when absent, refused outside 1 to [`MAX_LIST`].
pub(crate) fn limit(l: Option<usize>, default: usize) -> Result<usize, ServerError> {
    let n = l.unwrap_or(default);
    if n == 0 || n > MAX_LIST {
        return Err(ServerError::BadRequest {
            code: "invalid_limit",
            message: format!("limit={n} is out of range: give 1 to {MAX_LIST}"),
        });
    }
    Ok(n)
}

#[utoipa::path(
    get,
    path = "/v1/projects/{project}/operations",
    tag = "project",
    summary = "Recent operations, newest first",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`"), OperationsQuery),
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn operations(
    Project(m): Project,
    Params(q): Params<OperationsQuery>,
) -> Result<Json<Value>, ServerError> {
    let limit = limit(q.limit, 20)?;
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

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessageBody {
    role: String,
    content: String,
    agent: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/projects/{project}/messages",
    tag = "project",
    summary = "Record a turn of the conversation",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    request_body = MessageBody,
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn message(
    Project(m): Project,
    Body(b): Body<MessageBody>,
) -> Result<Response, ServerError> {
    let role: Role = b
        .role
        .parse()
        .map_err(|e: String| ServerError::BadRequest {
            code: "invalid_role",
            message: e,
        })?;
    blocking(move || {
        let m = m.with_agent(b.agent.as_deref());
        let out = m.message(NewMessage {
            agent: b.agent.clone(),
            ..NewMessage::new(role, b.content)
        })?;
        Ok(created(written(&out)?))
    })
    .await
}

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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::openapi::ErrorBody)),
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
