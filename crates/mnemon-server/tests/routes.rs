//! The routes beyond the stable five, the event stream, and views that
//! are rendered after the write is answered; over real HTTP (reqwest)
//! against the real server on 127.0.0.1:0.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

mod common;

use common::{Api, start};

async fn send(rb: reqwest::RequestBuilder, want: StatusCode) -> Value {
    let r = rb.send().await.unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    assert_eq!(status, want, "{body}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entities_search_sessions_checkpoints_compact_optimize_documents() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, token) = start(dir.path()).await;
    let api = Api::new(&srv, &token);

    let epic = send(
        api.post("entities", json!({"kind": "epic", "title": "Login"})),
        StatusCode::CREATED,
    )
    .await;
    let n = epic["number"].as_u64().unwrap();
    let task = send(
        api.post(
            "entities",
            json!({"kind": "task", "title": "Validate e-mail addresses", "parent": n, "priority": 1}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let t = task["number"].as_u64().unwrap();
    let listed = send(api.get("entities?kind=task"), StatusCode::OK).await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    let patched = send(
        api.patch(&format!("entities/{t}"), json!({"status": "done"})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(patched["status"], "completed", "{patched}");
    let one = send(api.get(&format!("entities/%23{t}")), StatusCode::OK).await;
    assert_eq!(one["title"], "Validate e-mail addresses");
    send(api.delete(&format!("entities/{t}")), StatusCode::OK).await;
    let gone = send(api.get(&format!("entities/{t}")), StatusCode::BAD_REQUEST).await;
    assert!(
        gone["error"]["message"]
            .as_str()
            .unwrap()
            .contains("deleted"),
        "{gone}"
    );

    send(
        api.post(
            "messages",
            json!({"role": "user", "content": "Where do the TLS certificates live?"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    send(
        api.post(
            "operations",
            json!({"type": "note", "data": {"text": "TLS certificates live in /etc/ssl/edge"}}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let msgs = send(api.get("messages?limit=5"), StatusCode::OK).await;
    assert_eq!(msgs.as_array().unwrap().len(), 1);
    let hits = send(api.get("search?q=certificates&limit=5"), StatusCode::OK).await;
    assert!(hits.as_array().unwrap().len() >= 2, "{hits}");

    let d = send(
        api.post(
            "decisions",
            json!({"title": "Edge TLS", "context": "certs rotate", "decision": "use the edge store"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let id = d["id"].as_str().unwrap();
    let shown = send(api.get(&format!("decisions/{id}")), StatusCode::OK).await;
    assert_eq!(shown["title"], "Edge TLS");

    let session = send(
        api.post("sessions", json!({"title": "certificates"})),
        StatusCode::CREATED,
    )
    .await;
    let sid = session["id"].as_str().unwrap().to_string();
    let shown = send(api.get(&format!("sessions/{sid}")), StatusCode::OK).await;
    assert_eq!(shown["id"], sid.as_str());

    let cp = send(api.post("checkpoints", json!({})), StatusCode::CREATED).await;
    let cid = cp["id"].as_str().unwrap();
    let shown = send(api.get(&format!("checkpoints/{cid}")), StatusCode::OK).await;
    assert_eq!(
        shown["checkpoint"]["id"], cid,
        "the checkpoint file as written"
    );
    let resumed = send(
        api.post(&format!("checkpoints/{cid}/resume"), json!({})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(resumed["checkpoint"], cid, "{resumed}");
    assert!(resumed["resume_instructions"].is_object(), "{resumed}");
    // A path is not a checkpoint id: the server reads no file for a client.
    let bad = send(
        api.post("checkpoints/..%2F..%2Fetc%2Fpasswd.json/resume", json!({})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(bad["error"]["code"], "invalid_checkpoint");

    let dry = send(
        api.post("compact", json!({"dry_run": true})),
        StatusCode::OK,
    )
    .await;
    assert!(dry.get("window").is_some(), "{dry}");
    let opt = send(
        api.post("optimize", json!({"dry_run": true})),
        StatusCode::OK,
    )
    .await;
    assert!(opt.get("window").is_some(), "{opt}");
    let doc = send(api.get("documents/work_plan"), StatusCode::OK).await;
    assert!(doc["content"].as_str().unwrap().contains("Login"), "{doc}");
    let bad = send(api.get("documents/diary"), StatusCode::BAD_REQUEST).await;
    assert_eq!(bad["error"]["code"], "invalid_document");

    let ended = send(api.post("sessions/end", json!({})), StatusCode::OK).await;
    assert!(ended.get("ended").is_some(), "{ended}");
    srv.stop().await;
}

/// Reads server-sent events until one named `name` arrives (or fails
/// after `within`); returns its data.
async fn until(
    resp: &mut reqwest::Response,
    buf: &mut String,
    name: &str,
    within: Duration,
) -> Value {
    let deadline = Instant::now() + within;
    loop {
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let event = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap_or("");
            let data = block
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap_or("null");
            if event == name {
                return serde_json::from_str(data).unwrap();
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "no `{name}` event within {within:?}; had {buf}"
        );
        match tokio::time::timeout(left, resp.chunk()).await {
            Ok(Ok(Some(bytes))) => buf.push_str(&String::from_utf8_lossy(&bytes)),
            Ok(other) => panic!("the stream ended: {other:?}"),
            Err(_) => panic!("no `{name}` event within {within:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_reports_writes_engine_actions_and_other_processes() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, token) = start(dir.path()).await;
    let c = reqwest::Client::new();
    let url = |p: &str| format!("{}/v1/projects/default/{p}", srv.base);

    let denied = c.get(url("events")).send().await.unwrap();
    assert_eq!(denied.status(), StatusCode::UNAUTHORIZED);

    let mut stream = c
        .get(url("events"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert!(
        stream.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let mut buf = String::new();
    until(&mut stream, &mut buf, "ready", Duration::from_secs(5)).await;

    c.post(url("operations"))
        .bearer_auth(&token)
        .json(&json!({"type": "task_execution", "agent": "coder", "data": {"task": 1}}))
        .send()
        .await
        .unwrap();
    let w = until(&mut stream, &mut buf, "write", Duration::from_secs(5)).await;
    assert_eq!(w["agent"], "coder", "{w}");
    assert!(w["status"]["window"]["used"].as_u64().unwrap() > 0, "{w}");

    c.post(url("checkpoints"))
        .bearer_auth(&token)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let cp = until(
        &mut stream,
        &mut buf,
        "checkpoint_created",
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(cp["trigger"], "manual", "{cp}");

    // Another process's write (a handle of its own on the same files) is
    // seen by the stream's poll.
    let path = dir.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let other = mnemon::Mnemon::open(&path).unwrap();
        other
            .record(mnemon::NewOperation::new(
                "note",
                json!({"text": "from a terminal"}),
            ))
            .unwrap();
    })
    .await
    .unwrap();
    let changed = until(&mut stream, &mut buf, "changed", Duration::from_secs(5)).await;
    assert!(
        changed["operations_head"].as_i64().unwrap() >= 2,
        "{changed}"
    );
    drop(stream);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_are_rendered_after_the_writes_are_answered_and_flushed_on_stop() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, token) = start(dir.path()).await;
    let c = reqwest::Client::new();
    let url = format!("{}/v1/projects/default/operations", srv.base);
    for i in 0..40 {
        let r = c
            .post(&url)
            .bearer_auth(&token)
            .json(&json!({"type": "task_execution", "data": {"step": format!("step-{i:03}")}}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::CREATED);
    }
    srv.stop().await;
    let sessions = dir.path().join(".mnemon/sessions");
    let log = std::fs::read_dir(&sessions)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with("session_"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .expect("a rendered session log");
    assert!(
        log.contains("step-039"),
        "the last write is in the view:\n{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forget_over_http_removes_a_record_from_search_and_context() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, token) = start(dir.path()).await;
    let api = Api::new(&srv, &token);

    let op = send(
        api.post(
            "operations",
            json!({"type": "note", "data": {"text": "the gazebo alarm code is 4417"}}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let seq = op["seq"].as_i64().unwrap();
    send(
        api.post(
            "operations",
            json!({"type": "note", "data": {"text": "the gazebo roof is green"}}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let found = send(api.get("search?q=gazebo"), StatusCode::OK).await;
    assert_eq!(found.as_array().map_or(0, Vec::len), 2, "{found}");

    // Nothing named, a bad field, an unknown record: 4xx, nothing forgotten.
    let empty = send(
        api.post("forget", json!({"targets": []})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(empty["error"]["code"], "targets", "{empty}");
    send(
        api.post("forget", json!({"target": "o1"})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    let unknown = send(
        api.post("forget", json!({"targets": [format!("o{seq}"), "o999999"]})),
        StatusCode::NOT_FOUND,
    )
    .await;
    assert!(unknown.to_string().contains("o999999"), "{unknown}");

    let gone = send(
        api.post("forget", json!({"targets": [format!("o{seq}")]})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(gone["operations"], json!([seq]), "{gone}");
    let found = send(api.get("search?q=gazebo"), StatusCode::OK).await;
    let text = found.to_string();
    assert!(!text.contains("4417") && text.contains("roof"), "{text}");
    let ctx = send(
        api.post(
            "context",
            json!({"budget": 2000, "query": "gazebo alarm code"}),
        ),
        StatusCode::OK,
    )
    .await;
    assert!(!ctx.to_string().contains("4417"), "{ctx}");
}

/// A listing without `?limit=` answers as many items as the library's
/// default for that listing, the same one the CLI and MCP use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listings_without_a_limit_take_the_librarys_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, token) = start(dir.path()).await;
    let api = Api::new(&srv, &token);
    let many = mnemon::LIST_LIMIT.max(mnemon::SEARCH_LIMIT) + 5;
    for i in 0..many {
        send(
            api.post(
                "operations",
                json!({"type": "note", "data": {"text": format!("heron count {i}")}}),
            ),
            StatusCode::CREATED,
        )
        .await;
    }
    // More than any page size the server used to default to (50).
    let decisions = 60;
    for i in 0..decisions {
        send(
            api.post(
                "decisions",
                json!({"title": format!("Decision {i}"), "context": "c", "decision": "d"}),
            ),
            StatusCode::CREATED,
        )
        .await;
    }
    let len = |v: &Value| v.as_array().unwrap().len();
    let hits = send(api.get("search?q=heron"), StatusCode::OK).await;
    assert_eq!(len(&hits), mnemon::SEARCH_LIMIT, "{hits}");
    let ops = send(api.get("operations?type=note"), StatusCode::OK).await;
    assert_eq!(len(&ops), mnemon::LIST_LIMIT);
    let all = send(api.get("decisions"), StatusCode::OK).await;
    assert_eq!(
        len(&all),
        decisions,
        "decisions are listed whole, as the CLI lists them"
    );
}
