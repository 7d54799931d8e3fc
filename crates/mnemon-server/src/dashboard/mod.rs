//! The dashboard at `/`: a page compiled into the binary (no Node toolchain
//! at run time, nothing fetched from elsewhere, so it works offline) that
//! reads the same JSON API agents use.
//!
//! A browser cannot send a bearer header on a page load or an
//! `EventSource`, so the page logs in once with a token and keeps it in an
//! HttpOnly, SameSite=Strict cookie: script cannot read it and other sites
//! cannot make the browser send it. `/?token=T` logs in directly, as Jupyter
//! does, then redirects so the token leaves the address bar and the
//! history. Writes made with the cookie must also carry
//! [`DASHBOARD_HEADER`]: a form on another site can carry a cookie in old
//! browsers, never a custom header.

pub(crate) mod data;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use crate::AppState;
use crate::api::blocking;
use crate::error::ServerError;

/// The cookie the token is kept in.
pub const COOKIE: &str = "mnemon_token";

/// The header a cookie-authenticated write must send.
pub const DASHBOARD_HEADER: &str = "x-mnemon-dashboard";

/// How long a login lasts: a working month, then the token is asked again.
const COOKIE_MAX_AGE_SECS: u64 = 30 * 24 * 3600;

const PAGE: &str = include_str!("../../assets/dashboard.html");
const LOGIN: &str = include_str!("../../assets/login.html");
const SCRIPT: &str = include_str!("../../assets/dashboard.js");
const STYLE: &str = include_str!("../../assets/dashboard.css");

/// Only this server's own files run on the page, and it is never framed.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The routes of the page.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(index))
        .route("/login", get(login_page).post(login))
        .route("/logout", axum::routing::post(logout))
        .route("/assets/dashboard.js", get(script))
        .route("/assets/dashboard.css", get(style))
}

/// The token in the request's cookie, if any.
pub(crate) fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Refuses a write authenticated by the cookie alone.
pub(crate) fn check_write(method: &Method, headers: &HeaderMap) -> Result<(), ServerError> {
    let safe = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    if safe || headers.contains_key(DASHBOARD_HEADER) {
        Ok(())
    } else {
        Err(ServerError::Forbidden(format!(
            "a write with the dashboard's cookie must send the `{DASHBOARD_HEADER}: 1` header; \
             programs should send `Authorization: Bearer <token>` instead"
        )))
    }
}

fn secured(mut r: Response, cache: &'static str) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    r
}

fn html(status: StatusCode, body: String) -> Response {
    secured(
        (
            status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            body,
        )
            .into_response(),
        "no-store",
    )
}

/// Text safe inside HTML.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn login_with(status: StatusCode, message: &str) -> Response {
    let note = if message.is_empty() {
        String::new()
    } else {
        format!("<p class=\"error\" role=\"alert\">{}</p>", escape(message))
    };
    html(status, LOGIN.replace("{{MESSAGE}}", &note))
}

/// The project a token opens, or why it opens none.
async fn project_of(state: &Arc<AppState>, token: String) -> Result<String, ServerError> {
    let state = Arc::clone(state);
    blocking(move || {
        state
            .projects
            .tokens()
            .project_of(&token)?
            .ok_or_else(crate::auth::unknown_token)
    })
    .await
}

fn logged_in(token: &str) -> Response {
    let cookie = format!(
        "{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={COOKIE_MAX_AGE_SECS}"
    );
    let mut r = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    secured(r, "no-store")
}

#[derive(Debug, Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

/// A token fit for a cookie: what `mnemon token create` prints.
fn well_formed(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= 256
        && token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

async fn index(
    State(state): State<Arc<AppState>>,
    Query(q): Query<TokenQuery>,
    headers: HeaderMap,
) -> Response {
    if let Some(token) = q.token {
        return login_token(&state, token.trim()).await;
    }
    let Some(token) = cookie_token(&headers) else {
        return login_with(StatusCode::OK, "");
    };
    match project_of(&state, token).await {
        Ok(project) => html(
            StatusCode::OK,
            PAGE.replace("{{PROJECT}}", &escape(&project)),
        ),
        Err(e) => login_with(
            StatusCode::UNAUTHORIZED,
            &format!("your login has ended: {e}"),
        ),
    }
}

async fn login_token(state: &Arc<AppState>, token: &str) -> Response {
    if !well_formed(token) {
        return login_with(
            StatusCode::UNAUTHORIZED,
            "that is not a token: paste what `mnemon token create` printed (mnm_...)",
        );
    }
    match project_of(state, token.to_string()).await {
        Ok(_) => logged_in(token),
        Err(e) => login_with(StatusCode::UNAUTHORIZED, &e.to_string()),
    }
}

async fn login_page() -> Response {
    login_with(StatusCode::OK, "")
}

#[derive(Debug, Deserialize)]
struct LoginForm {
    token: String,
}

async fn login(State(state): State<Arc<AppState>>, Form(f): Form<LoginForm>) -> Response {
    login_token(&state, f.token.trim()).await
}

async fn logout() -> Response {
    let mut r = (StatusCode::SEE_OTHER, [(header::LOCATION, "/login")]).into_response();
    r.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("mnemon_token=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"),
    );
    secured(r, "no-store")
}

async fn script() -> Response {
    secured(
        (
            [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
            SCRIPT,
        )
            .into_response(),
        "no-cache",
    )
}

async fn style() -> Response {
    secured(
        ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response(),
        "no-cache",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; mnemon_token=mnm_abc ; b=2"),
        );
        assert_eq!(cookie_token(&h).as_deref(), Some("mnm_abc"));
        h.insert(header::COOKIE, HeaderValue::from_static("mnemon_token="));
        assert_eq!(cookie_token(&h), None);
    }

    #[test]
    fn a_cookie_write_needs_the_dashboard_header() {
        let mut h = HeaderMap::new();
        assert!(check_write(&Method::GET, &h).is_ok());
        let refused = check_write(&Method::POST, &h).unwrap_err();
        assert!(refused.to_string().contains(DASHBOARD_HEADER));
        h.insert(DASHBOARD_HEADER, HeaderValue::from_static("1"));
        assert!(check_write(&Method::POST, &h).is_ok());
    }

    #[test]
    fn text_put_in_the_page_cannot_open_a_tag() {
        assert_eq!(
            escape("<b a=\"x\">&'"),
            "&lt;b a=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert!(!well_formed("mnm_a; Path=/evil"));
        assert!(well_formed("mnm_0123abcd"));
    }
}
