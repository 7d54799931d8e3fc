//! Messages: record a turn, list them.

use std::sync::Arc;

use axum::Json;
use axum::response::Response;
use mnemon::{MessageQuery, NewMessage, Role};
use serde::Deserialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Body, Params, Project, blocking, created, limit, value, written};
use crate::AppState;
use crate::error::ServerError;

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
    responses((status = 201, description = "stored", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
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
    responses((status = 200, description = "the result", content_type = "application/json", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn messages(
    Project(m): Project,
    Params(q): Params<MessagesQuery>,
) -> Result<Json<Value>, ServerError> {
    let n = limit(q.limit, mnemon::LIST_LIMIT)?;
    blocking(move || {
        value(&m.messages(&MessageQuery {
            session_id: q.session,
            keywords: q.search,
            limit: Some(n),
        })?)
    })
    .await
}

/// The routes of this resource, each with its OpenAPI entry.
pub(crate) fn routes() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(messages, message))
}
