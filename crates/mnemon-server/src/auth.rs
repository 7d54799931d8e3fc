//! Bearer tokens: which project a request may use. No token or an unknown
//! one is 401; a token of another project is 404, as if it did not exist.

use std::sync::Arc;

use mnemon::Mnemon;

use crate::AppState;
use crate::api::blocking;
use crate::error::ServerError;

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
