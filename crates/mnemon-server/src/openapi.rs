//! `/openapi.json`: the OpenAPI 3.1 document of the JSON API, generated
//! from the handlers' own annotations and request types (utoipa), so
//! clients in any language can be generated from what the server really
//! accepts. `tests/openapi.rs` calls every documented route to keep the
//! document and the router the same.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

/// Every error: a stable code and a message that says what to fix.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct ErrorBody {
    error: ErrorDetail,
    /// On 409 `stale_version`: the item as it is now.
    current: Option<serde_json::Value>,
}

/// The error itself.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct ErrorDetail {
    /// Stable, for programs: `unauthorized`, `not_found`, `invalid_body`,
    /// `invalid_budget`, `stale_version`...
    code: String,
    /// For people: what is wrong and how to fix it.
    message: String,
}

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
    paths(
        crate::health::healthz,
        crate::health::readyz,
        crate::api::status,
        crate::api::record,
        crate::api::operations,
        crate::api::message,
        crate::api::context,
        crate::memory_api::hot,
        crate::memory_api::add_hot,
        crate::memory_api::update_hot,
        crate::memory_api::decisions,
        crate::memory_api::decide,
        crate::memory_api::sessions,
        crate::memory_api::start_session,
        crate::memory_api::end_session,
        crate::memory_api::checkpoints,
        crate::memory_api::checkpoint,
        crate::memory_api::refresh,
        crate::memory_api::report_usage,
        crate::more_api::search,
        crate::more_api::messages,
        crate::more_api::entities,
        crate::more_api::create_entity,
        crate::more_api::entity,
        crate::more_api::update_entity,
        crate::more_api::delete_entity,
        crate::more_api::decision,
        crate::more_api::session,
        crate::more_api::restore_session,
        crate::more_api::checkpoint,
        crate::more_api::resume,
        crate::more_api::compact,
        crate::more_api::forget,
        crate::more_api::optimize,
        crate::more_api::document,
        crate::events::events,
        crate::dashboard::data::agents,
        crate::dashboard::data::timeline,
        crate::dashboard::data::compactions,
    ),
    components(schemas(ErrorBody, ErrorDetail))
)]
pub struct ApiDoc;

/// The document as served.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}
