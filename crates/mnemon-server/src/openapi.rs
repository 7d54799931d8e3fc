//! `/openapi.json`: the OpenAPI 3.1 document of the JSON API, generated
//! from the handlers' own annotations and request types (utoipa), so
//! clients in any language can be generated from what the server really
//! accepts. `tests/openapi.rs` calls every documented route to keep the
//! document and the router the same.

use std::sync::Arc;

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;

use crate::AppState;
use crate::auth::authorized_any;
use crate::error::ServerError;
use utoipa::{Modify, OpenApi};

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A token scoped to one project: `mnemon token create --project P`",
                    ))
                    .build(),
            ),
        );
    }
}

/// The document.
#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "mnemon",
        description = "Context-window manager and tiered memory for LLM agents. Every project route needs `Authorization: Bearer <token>`. MCP (streamable HTTP) is served at `/mcp` with the same tokens; `?agent=NAME` picks the agent.",
    ),
    modifiers(&Bearer),
    components(schemas(crate::error::ErrorBody, crate::error::ErrorDetail))
)]
pub struct ApiDoc;

/// Every documented route with its entry: health, the API's resources,
/// events and the dashboard's data. The router serves exactly these, so
/// the document and the routes cannot drift apart.
pub(crate) fn documented() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(crate::health::healthz))
        .routes(routes!(crate::health::readyz))
        .merge(crate::api::routes())
        .routes(routes!(crate::events::events))
        .merge(crate::dashboard::data::routes())
}

/// The document as served.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = documented().split_for_parts().1;
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}

/// `/openapi.json`, for any valid token.
pub(crate) async fn openapi(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Json<utoipa::openapi::OpenApi>, ServerError> {
    authorized_any(&state, &headers).await?;
    Ok(Json(document()))
}
