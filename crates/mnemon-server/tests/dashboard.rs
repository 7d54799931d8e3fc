//! The dashboard's login and what the cookie may do, over real HTTP
//! (reqwest) against the real server. The page itself is tested in a real
//! browser in `mnemon-cli/tests/dashboard.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use reqwest::StatusCode;
use reqwest::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use serde_json::{Value, json};

mod common;

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_in_the_address_becomes_an_http_only_cookie_and_leaves_the_address() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, token) = common::start(dir.path()).await;
    let c = client();

    // No cookie: the login page, with the command that makes a token.
    let r = c.get(format!("{}/", srv.base)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(
        r.headers()[CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .contains("script-src 'self'")
    );
    let page = r.text().await.unwrap();
    assert!(page.contains("mnemon token create"), "{page}");
    assert!(page.contains("name=\"token\""));

    // `/?token=T`: a redirect to `/` that sets the cookie.
    let r = c
        .get(format!("{}/?token={token}", srv.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()[LOCATION], "/");
    let cookie = r.headers()[SET_COOKIE].to_str().unwrap().to_string();
    assert!(
        cookie.starts_with(&format!("mnemon_token={token};")),
        "{cookie}"
    );
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(flag), "{flag} missing from {cookie}");
    }
    let jar = format!("mnemon_token={token}");

    // With the cookie: the dashboard of the token's project.
    let r = c
        .get(format!("{}/", srv.base))
        .header(COOKIE, &jar)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let page = r.text().await.unwrap();
    assert!(page.contains("content=\"default\""), "{page}");
    assert!(page.contains("/assets/dashboard.js"));
    assert!(
        !page.contains(&token),
        "the token must not be written into the page"
    );

    // The form logs in the same way; a wrong token is refused on the page.
    let r = c
        .post(format!("{}/login", srv.base))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let r = c
        .post(format!("{}/login", srv.base))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body("token=mnm_wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.text().await.unwrap().contains("not known to the server"));
    let r = c
        .get(format!("{}/?token=a;b", srv.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.text().await.unwrap().contains("that is not a token"));

    // The assets are served from the binary.
    for (path, kind) in [
        ("/assets/dashboard.js", "text/javascript"),
        ("/assets/dashboard.css", "text/css"),
    ] {
        let r = c.get(format!("{}{path}", srv.base)).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with(kind)
        );
    }

    // Logging out clears the cookie.
    let r = c
        .post(format!("{}/logout", srv.base))
        .header(COOKIE, &jar)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert!(
        r.headers()[SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cookie_reads_but_writes_only_with_the_dashboard_header() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, token) = common::start(dir.path()).await;
    let c = client();
    let jar = format!("mnemon_token={token}");
    let url = |p: &str| format!("{}/v1/projects/default/{p}", srv.base);

    let r = c
        .get(url("status"))
        .header(COOKIE, &jar)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);

    // A form on another site could send the cookie; it cannot add a header.
    let op = json!({"type": "file_modified", "data": {"path": "a.rs"}});
    let r = c
        .post(url("operations"))
        .header(COOKIE, &jar)
        .json(&op)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "forbidden");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("x-mnemon-dashboard")
    );
    let r = c
        .post(url("operations"))
        .header(COOKIE, &jar)
        .header("x-mnemon-dashboard", "1")
        .json(&op)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);

    // A bad cookie is refused like a bad bearer token; another project's
    // route is not found.
    let cookie_get = |u: String, cookie: &str| c.get(u).header(COOKIE, cookie).send();
    let r = cookie_get(url("status"), "mnemon_token=mnm_nothing")
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let other = format!("{}/v1/projects/other/status", srv.base);
    let r = cookie_get(other, &jar).await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);

    // The dashboard's own reads, with the cookie or a bearer token.
    let agents: Value = cookie_get(url("agents"), &jar)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let first = &agents["agents"][0];
    assert!(first["status"]["window"]["effective_max"].as_u64().unwrap() > 0);
    let bearer_get = |p: &str| c.get(url(p)).bearer_auth(&token).send();
    let timeline: Value = bearer_get("timeline?limit=50")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let points = timeline["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{timeline}");
    assert_eq!(
        points[0]["used"], first["status"]["window"]["used"],
        "the last point is the usage now"
    );
    let r = bearer_get("timeline?limit=0").await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = bearer_get("compactions").await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    srv.stop().await;
}
