//! mnemon over HTTP: `mnemon serve`. Agents reach a project's memory
//! through a JSON API under `/v1/projects/{project}/`, each request mapped to
//! one verb of the same library handle the CLI uses, so the rules (the
//! 95 % guard, zone actions, views, conflicts) are the same.
//!
//! Every route but `/healthz` and `/readyz` needs a bearer token scoped to
//! the project it names (`mnemon token create --project P`). The dashboard
//! at `/` logs in with the same tokens and keeps one in a cookie.

mod api;
mod auth;
pub mod dashboard;
mod error;
mod events;
mod health;
pub mod mcp;
pub mod openapi;
mod projects;
pub mod proxy;
mod tokens;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use mnemon::OpenOptions;

pub use error::ServerError;
pub use projects::{DEFAULT, Projects, create_token, project_dir};
pub use tokens::{StoredToken, Tokens};

/// What every request shares.
#[derive(Debug)]
pub struct AppState {
    /// The projects this server serves.
    pub projects: Projects,
    /// Cancelled when the server stops: ends MCP sessions and event streams.
    pub stopping: tokio_util::sync::CancellationToken,
    /// Accept any `Host` on `/mcp` (the server listens beyond loopback).
    pub open_hosts: bool,
    /// The context proxy's conversations and upstream clients.
    pub proxy: proxy::ProxyState,
}

impl AppState {
    /// The state of a server over the projects of `root`.
    pub fn new(root: PathBuf, open: OpenOptions, open_hosts: bool) -> AppState {
        AppState {
            projects: Projects::new(root, open),
            stopping: tokio_util::sync::CancellationToken::new(),
            open_hosts,
            proxy: proxy::ProxyState::default(),
        }
    }
}

/// The largest request body: far above any record, and bounded.
pub const MAX_BODY: usize = 4 * 1024 * 1024;

/// How long one request may take before it is answered 408.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The application: routes, body limit, timeout, request tracing.
pub fn router(state: Arc<AppState>) -> Router {
    let mcp = Router::new()
        .nest_service(
            "/mcp",
            mcp::service(state.open_hosts, state.stopping.clone()),
        )
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            mcp::authorize,
        ));
    let api = Router::new()
        .merge(mcp)
        .merge(openapi::documented().split_for_parts().0)
        .route("/openapi.json", get(openapi::openapi))
        .merge(dashboard::routes())
        .fallback(|| async {
            ServerError::NotFound(
                "no such route; the API is under /v1/projects/{project}/ (status, operations, messages, context)"
                    .into(),
            )
        })
        .layer(tower_http::limit::RequestBodyLimitLayer::new(MAX_BODY))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ));
    // The proxy's answers take as long as the model does ([llm]
    // timeout_secs bounds them), and its errors, a body too large among
    // them, are in the client's wire format: its routes have their own.
    Router::new()
        .merge(proxy::routes())
        .merge(api)
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}

/// How to run a server.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The directory whose `.mnemon/` is the `default` project.
    pub root: PathBuf,
    /// Environment, clock and agent for the projects it opens.
    pub open: OpenOptions,
}

/// Serves on `listener` until `shutdown` resolves, then finishes the
/// requests in flight (a write that started is committed and answered).
pub async fn serve(
    listener: tokio::net::TcpListener,
    opts: ServeOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let loopback = listener
        .local_addr()
        .map(|a| a.ip().is_loopback())
        .unwrap_or(true);
    // Views are rendered after each write is answered, not inside it.
    let open = opts.open.render_in_background(true);
    let state = Arc::new(AppState::new(opts.root, open, !loopback));
    let stop = state.stopping.clone();
    let kept = Arc::clone(&state);
    // Small writes go at once: a streamed answer's chunks would otherwise
    // wait for the client's delayed acknowledgement (40 ms each).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY not set on a connection");
        }
    });
    let served = axum::serve(listener, router(state))
        .with_graceful_shutdown(async move {
            shutdown.await;
            // Open MCP streams would hold the server up otherwise.
            stop.cancel();
        })
        .await
        .map_err(|e| ServerError::Internal(format!("the server stopped: {e}")));
    // Every answered write's views are on disk before the process exits.
    tokio::task::spawn_blocking(move || kept.projects.flush_all())
        .await
        .map_err(|e| ServerError::Internal(format!("views were not flushed: {e}")))?;
    served
}

/// SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        // Without a handler the process still stops on the signal.
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

/// `mnemon serve`: binds `addr`, prints where it listens, serves until
/// SIGTERM or Ctrl-C. Refuses to start before a token exists, since every
/// route needs one.
pub fn run(addr: SocketAddr, opts: ServeOptions) -> Result<(), ServerError> {
    let tokens = Tokens::at(
        &projects::project_dir(&opts.root, DEFAULT)
            .join(mnemon::DIR_NAME)
            .join("server"),
    );
    if !tokens.any()? {
        return Err(ServerError::BadRequest {
            code: "no_tokens",
            message: "no tokens yet, and every route needs one: run `mnemon token create --project default` first".into(),
        });
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServerError::Internal(format!("cannot start the runtime: {e}")))?;
    rt.block_on(async move {
        let listener =
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| ServerError::BadRequest {
                    code: "listen",
                    message: format!("cannot listen on {addr}: {e}"),
                })?;
        let local = listener
            .local_addr()
            .map_err(|e| ServerError::Internal(e.to_string()))?;
        // One write, and a closed stdout (a supervisor that read the
        // address and went away) is no reason to stop serving.
        let _ = std::io::Write::write_all(
            &mut std::io::stdout().lock(),
            format!(
                "mnemon serving http://{local} (Ctrl-C or SIGTERM stops it)\n\
                 dashboard: http://{local}/ (log in with a token from `mnemon token create`)\n"
            )
            .as_bytes(),
        );
        serve(listener, opts, shutdown_signal()).await
    })
}
