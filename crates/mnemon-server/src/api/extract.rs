//! Extractors whose problems are answered as JSON errors naming the fix, and the
//! project a request names, opened once its token is checked.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use mnemon::Mnemon;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::AppState;
use crate::auth::{authorized, bearer, open_for};
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
