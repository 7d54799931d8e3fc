//! `/openapi.json` is a valid OpenAPI 3.1 document, and every route it
//! documents is served (the document and the router cannot drift apart).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use reqwest::StatusCode;
use serde_json::{Value, json};

mod common;

use common::start;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_is_openapi_3_1_and_every_documented_route_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, token) = start(dir.path()).await;
    let c = reqwest::Client::new();
    let denied = c
        .get(format!("{}/openapi.json", srv.base))
        .send()
        .await
        .unwrap();
    assert_eq!(denied.status(), StatusCode::UNAUTHORIZED);
    let doc: Value = c
        .get(format!("{}/openapi.json", srv.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    let record = &doc["paths"]["/v1/projects/{project}/operations"]["post"];
    let schema = &record["requestBody"]["content"]["application/json"]["schema"]["$ref"];
    assert_eq!(schema, "#/components/schemas/RecordBody");
    let fields = &doc["components"]["schemas"]["RecordBody"]["properties"];
    for f in ["type", "data", "agent", "tokens", "phase", "status"] {
        assert!(
            fields.get(f).is_some(),
            "RecordBody documents `{f}`: {fields}"
        );
    }

    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() >= 25, "{} paths", paths.len());
    let mut called = 0;
    for (path, ops) in paths {
        let concrete = path
            .replace("{project}", "default")
            .replace("{id}", "x")
            .replace("{number}", "1")
            .replace("{kind}", "work_plan");
        for method in ops.as_object().unwrap().keys() {
            let url = format!("{}{concrete}", srv.base);
            let rb = match method.as_str() {
                "get" => c.get(&url),
                "post" => c.post(&url).json(&json!({})),
                "patch" => c.patch(&url).json(&json!({})),
                "delete" => c.delete(&url),
                other => panic!("unexpected method {other}"),
            };
            let r = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                rb.bearer_auth(&token).send(),
            )
            .await
            .expect("answered")
            .unwrap();
            let status = r.status();
            assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
            assert!(!status.is_server_error(), "{method} {path}: {status}");
            if status == StatusCode::NOT_FOUND {
                let body: Value = r.json().await.unwrap();
                let msg = body["error"]["message"].as_str().unwrap_or_default();
                assert!(
                    !msg.starts_with("no such route"),
                    "{method} {path} is not routed"
                );
            }
            called += 1;
        }
    }
    assert!(called >= 30, "{called} operations called");
    srv.stop().await;
}
