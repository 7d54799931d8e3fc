//! A catalogue of bad requests, as careless clients send them, against
//! every kind of route: each is answered 4xx with a JSON error whose code
//! is stable and whose message names what to fix, never a 5xx.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use reqwest::StatusCode;
use serde_json::{Value, json};

mod common;

use common::start;

/// One bad request: method, path under the project (or absolute when it
/// starts with `/`), raw body, whether to send the token, the status and
/// error code expected.
struct Case {
    method: &'static str,
    path: &'static str,
    body: Option<&'static str>,
    auth: Auth,
    status: u16,
    code: &'static str,
}

#[derive(Clone, Copy)]
enum Auth {
    Good,
    None,
    Wrong,
}

const fn case(
    method: &'static str,
    path: &'static str,
    body: Option<&'static str>,
    status: u16,
    code: &'static str,
) -> Case {
    Case {
        method,
        path,
        body,
        auth: Auth::Good,
        status,
        code,
    }
}

const fn unauth(method: &'static str, path: &'static str, auth: Auth) -> Case {
    Case {
        method,
        path,
        body: None,
        auth,
        status: 401,
        code: "unauthorized",
    }
}

const CATALOGUE: &[Case] = &[
    // Malformed, mistyped and unknown bodies.
    case(
        "POST",
        "operations",
        Some("{\"type\": \"x\""),
        400,
        "malformed_json",
    ),
    case(
        "POST",
        "operations",
        Some("not json"),
        400,
        "malformed_json",
    ),
    case("POST", "operations", Some("[]"), 400, "invalid_body"),
    case("POST", "operations", Some("{}"), 400, "invalid_body"),
    case(
        "POST",
        "operations",
        Some("{\"type\": 7}"),
        400,
        "invalid_body",
    ),
    case(
        "POST",
        "operations",
        Some("{\"type\": \"x\", \"tokens\": -3}"),
        400,
        "invalid_body",
    ),
    case(
        "POST",
        "operations",
        Some("{\"type\": \"x\", \"colour\": \"red\"}"),
        400,
        "invalid_body",
    ),
    case(
        "POST",
        "operations",
        Some("{\"type\": \"x\", \"phase\": \"lunch\"}"),
        400,
        "invalid_phase",
    ),
    case(
        "POST",
        "messages",
        Some("{\"role\": \"robot\", \"content\": \"hi\"}"),
        400,
        "invalid_role",
    ),
    case(
        "POST",
        "messages",
        Some("{\"role\": \"user\"}"),
        400,
        "invalid_body",
    ),
    case(
        "POST",
        "messages",
        Some("{\"role\": \"user\", \"content\": \"   \"}"),
        400,
        "invalid_input",
    ),
    case(
        "POST",
        "context",
        Some("{\"budget\": 0}"),
        400,
        "invalid_budget",
    ),
    case(
        "POST",
        "context",
        Some("{\"budget\": 1000000000000}"),
        400,
        "invalid_budget",
    ),
    case(
        "POST",
        "context",
        Some("{\"budget\": \"lots\"}"),
        400,
        "invalid_body",
    ),
    case(
        "POST",
        "context",
        Some("{\"preset\": \"nonsense\"}"),
        400,
        "invalid_input",
    ),
    case(
        "POST",
        "context",
        Some("{\"format\": \"yaml\"}"),
        400,
        "invalid_format",
    ),
    case(
        "POST",
        "hot",
        Some("{\"kind\": \"wish\", \"text\": \"x\"}"),
        400,
        "invalid_kind",
    ),
    case(
        "POST",
        "hot",
        Some("{\"kind\": \"goal\", \"text\": \"x\", \"priority\": \"urgent!\"}"),
        400,
        "invalid_priority",
    ),
    case(
        "PATCH",
        "hot/nope",
        Some("{\"status\": \"sleeping\"}"),
        400,
        "invalid_status",
    ),
    case(
        "PATCH",
        "hot/nope",
        Some("{\"text\": \"x\"}"),
        404,
        "not_found",
    ),
    case(
        "POST",
        "decisions",
        Some("{\"title\": \"t\"}"),
        400,
        "invalid_decision",
    ),
    case(
        "POST",
        "decisions",
        Some(
            "{\"title\": \"t\", \"context\": \"c\", \"decision\": \"d\", \"reasoning\": \"because\"}",
        ),
        400,
        "invalid_decision",
    ),
    case(
        "POST",
        "report-usage",
        Some("{\"prompt_tokens\": \"many\"}"),
        400,
        "invalid_body",
    ),
    case(
        "POST",
        "entities",
        Some("{\"kind\": \"saga\", \"title\": \"x\"}"),
        400,
        "invalid_kind",
    ),
    case(
        "POST",
        "entities",
        Some("{\"kind\": \"task\", \"title\": \"x\", \"priority\": 9}"),
        400,
        "invalid_priority",
    ),
    case(
        "POST",
        "entities",
        Some("{\"kind\": \"task\", \"title\": \"x\", \"parent\": 999}"),
        404,
        "not_found",
    ),
    case(
        "PATCH",
        "entities/1",
        Some("{\"status\": \"sleeping\"}"),
        400,
        "invalid_status",
    ),
    case(
        "POST",
        "compact",
        Some("{\"dry_run\": \"yes\"}"),
        400,
        "invalid_body",
    ),
    // Query strings and path parameters.
    case("GET", "operations?limit=0", None, 400, "invalid_limit"),
    case(
        "GET",
        "operations?limit=99999999",
        None,
        400,
        "invalid_limit",
    ),
    case("GET", "operations?limit=ten", None, 400, "invalid_query"),
    case("GET", "operations?colour=red", None, 400, "invalid_query"),
    case("GET", "search", None, 400, "invalid_query"),
    case("GET", "search?q=%20", None, 400, "invalid_query"),
    case("GET", "entities?kind=saga", None, 400, "invalid_kind"),
    case("GET", "entities/abc", None, 400, "invalid_number"),
    case("GET", "entities/424242", None, 404, "not_found"),
    case("GET", "decisions/DR-nope", None, 404, "not_found"),
    case("GET", "sessions/nope", None, 404, "not_found"),
    case(
        "GET",
        "checkpoints/CP-19990101-000000",
        None,
        404,
        "not_found",
    ),
    case(
        "GET",
        "checkpoints/..%2F..%2Fetc%2Fpasswd",
        None,
        400,
        "invalid_checkpoint",
    ),
    case(
        "POST",
        "checkpoints/%2Fetc%2Fhosts.json/resume",
        Some("{}"),
        400,
        "invalid_checkpoint",
    ),
    case("GET", "documents/diary", None, 400, "invalid_document"),
    case(
        "GET",
        "documents/work_plan?version=0",
        None,
        404,
        "not_found",
    ),
    // Projects, routes and tokens.
    case("GET", "/v1/projects/nope/status", None, 404, "not_found"),
    case(
        "GET",
        "/v1/projects/..%2F..%2Fetc/status",
        None,
        404,
        "not_found",
    ),
    case("GET", "/v2/anything", None, 404, "not_found"),
    unauth("GET", "status", Auth::None),
    unauth("GET", "status", Auth::Wrong),
    unauth("POST", "/mcp", Auth::None),
    unauth("POST", "/mcp", Auth::Wrong),
    unauth("GET", "/openapi.json", Auth::None),
    unauth("GET", "/readyz", Auth::Wrong),
    unauth("GET", "events", Auth::None),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_request_gets_a_4xx_json_error_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, token) = start(dir.path()).await;
    let c = reqwest::Client::new();
    for (i, k) in CATALOGUE.iter().enumerate() {
        let url = if k.path.starts_with('/') {
            format!("{}{}", srv.base, k.path)
        } else {
            format!("{}/v1/projects/default/{}", srv.base, k.path)
        };
        let mut rb = c.request(k.method.parse().unwrap(), &url);
        rb = match k.auth {
            Auth::Good => rb.bearer_auth(&token),
            Auth::Wrong => rb.bearer_auth("mnm_not-a-token"),
            Auth::None => rb,
        };
        if let Some(b) = k.body {
            rb = rb.header("content-type", "application/json").body(b);
        }
        let r = rb.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        let what = format!("case {i}: {} {}", k.method, k.path);
        assert_eq!(status, k.status, "{what}: {text}");
        let e: Value =
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("{what}: not JSON: {text}"));
        assert_eq!(e["error"]["code"], k.code, "{what}: {e}");
        let message = e["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.len() > 10,
            "{what}: a message that says what to fix: {e}"
        );
    }

    // A stale version is a 409 that carries the item as it is now.
    let url = |p: &str| format!("{}/v1/projects/default/{p}", srv.base);
    let item: Value = c
        .post(url("hot"))
        .bearer_auth(&token)
        .json(&json!({"kind": "goal", "text": "Ship it"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = item["id"].as_str().unwrap();
    for (version, want) in [(1, StatusCode::OK), (1, StatusCode::CONFLICT)] {
        let r = c
            .patch(url(&format!("hot/{id}")))
            .bearer_auth(&token)
            .header("if-match", version.to_string())
            .json(&json!({"text": "Ship it on Friday"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), want);
        if want == StatusCode::CONFLICT {
            let e: Value = r.json().await.unwrap();
            assert_eq!(e["error"]["code"], "stale_version", "{e}");
            assert_eq!(e["current"]["version"], 2, "{e}");
        }
    }
    let r = c
        .patch(url(&format!("hot/{id}")))
        .bearer_auth(&token)
        .header("if-match", "yesterday")
        .json(&json!({"text": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    srv.stop().await;
}
