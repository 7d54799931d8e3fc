//! The real server on 127.0.0.1:0 for the tests, as `mnemon serve` runs it.
#![allow(dead_code)]

use std::path::Path;

pub struct Running {
    pub base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.task.await.unwrap();
    }
}

/// A project in `dir` with a token for `default`, served on a free port.
pub async fn start(dir: &Path) -> (Running, String) {
    // The tests' reqwest shares mnemon-llm's TLS build, which needs the
    // crypto provider installed.
    mnemon::mnemon_llm::ensure_crypto();
    mnemon::init(
        dir,
        &mnemon::InitOptions {
            model: None,
            window: Some(128_000),
        },
    )
    .unwrap();
    let token = mnemon_server::create_token(dir, "default", "2025-01-15T14:30:00Z").unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let opts = mnemon_server::ServeOptions {
        root: dir.to_path_buf(),
        open: mnemon::OpenOptions::new(),
    };
    let task = tokio::spawn(async move {
        mnemon_server::serve(listener, opts, async {
            let _ = rx.await;
        })
        .await
        .unwrap();
    });
    (
        Running {
            base,
            stop: Some(tx),
            task,
        },
        token,
    )
}

/// A client of the served `default` project, authorized by its token.
pub struct Api {
    pub client: reqwest::Client,
    base: String,
    token: String,
}

impl Api {
    pub fn new(srv: &Running, token: &str) -> Self {
        Self {
            client: reqwest::Client::new(),
            base: srv.base.clone(),
            token: token.to_string(),
        }
    }

    /// `path` under the project (`entities/3`).
    pub fn url(&self, path: &str) -> String {
        format!("{}/v1/projects/default/{path}", self.base)
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(self.url(path)).bearer_auth(&self.token)
    }

    pub fn post(&self, path: &str, body: serde_json::Value) -> reqwest::RequestBuilder {
        self.client
            .post(self.url(path))
            .bearer_auth(&self.token)
            .json(&body)
    }

    pub fn patch(&self, path: &str, body: serde_json::Value) -> reqwest::RequestBuilder {
        self.client
            .patch(self.url(path))
            .bearer_auth(&self.token)
            .json(&body)
    }

    pub fn delete(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.delete(self.url(path)).bearer_auth(&self.token)
    }
}
