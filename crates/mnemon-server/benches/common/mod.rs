//! What the load benchmarks share: the client load, percentiles, a
//! server's peak RSS, and `mnemon serve` in a child process.
#![allow(dead_code, reason = "each benchmark uses part of it")]

use std::time::Instant;

use serde_json::json;

pub fn percentiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
    (at(0.50), at(0.95), at(0.99))
}

pub fn peak_rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Fires `clients` × `each` records at `url`; returns latencies (ms) and
/// failures.
pub async fn load(
    url: String,
    token: Option<String>,
    clients: usize,
    each: std::ops::Range<usize>,
) -> (Vec<f64>, usize) {
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (url, token, each) = (url.clone(), token.clone(), each.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                let mut lat = Vec::with_capacity(each.len());
                let mut failed = 0;
                for i in each {
                    let mut req = http.post(&url).json(&json!({
                        "type": "load",
                        "agent": format!("client-{c}"),
                        "data": {"c": c, "i": i, "result": format!("step {i} of client {c} finished the parser work")}
                    }));
                    if let Some(t) = &token {
                        req = req.bearer_auth(t);
                    }
                    let t0 = Instant::now();
                    match req.send().await {
                        Ok(r) if r.status().as_u16() == 201 => {
                            let _ = r.bytes().await;
                            lat.push(t0.elapsed().as_secs_f64() * 1e3);
                        }
                        _ => failed += 1,
                    }
                }
                (lat, failed)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut failed = 0;
    for t in tasks {
        let (l, f) = t.await.unwrap();
        all.extend(l);
        failed += f;
    }
    (all, failed)
}

/// The child: `mnemon serve` on a free port of loopback, printing it.
pub fn child_server(dir: &std::path::Path, database: Option<&str>) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{}", listener.local_addr().unwrap());
        let opts = mnemon_server::ServeOptions {
            root: dir.to_path_buf(),
            open: match database {
                Some(url) => mnemon::OpenOptions::new()
                    .environment(mnemon::Environment::empty().with("MNEMON_STORAGE__URL", url)),
                None => mnemon::OpenOptions::new(),
            },
        };
        mnemon_server::serve(listener, opts, mnemon_server::shutdown_signal())
            .await
            .unwrap();
    });
}

/// This benchmark binary re-run as `--serve DIR [URL]`: the server in a
/// process of its own, with the two glibc arenas `mnemon serve` gives
/// itself (`MALLOC_ARENA_MAX=2`, see the CLI's `serve`). Returns the child
/// and its base URL.
pub fn spawn_server(
    dir: &std::path::Path,
    database: Option<&str>,
) -> (std::process::Child, String) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.arg("--serve").arg(dir).env("MALLOC_ARENA_MAX", "2");
    if let Some(url) = database {
        cmd.arg(url);
    }
    let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    (child, format!("http://{}", line.trim()))
}

/// `--serve DIR [URL]` in this process's arguments: run as the server.
pub fn serve_if_asked() -> bool {
    let raw: Vec<String> = std::env::args().collect();
    let Some(at) = raw.iter().position(|a| a == "--serve") else {
        return false;
    };
    child_server(
        std::path::Path::new(&raw[at + 1]),
        raw.get(at + 2).map(String::as_str),
    );
    true
}

/// The `load` records of the bench's clients in `m` (prefill left out):
/// every `load` operation stored, the distinct (client, index) pairs of the
/// measured ones, and how many of those were stored twice.
pub fn stored(m: &mnemon::Mnemon) -> (usize, usize, usize) {
    let ops = m
        .recent(&mnemon::OperationQuery {
            kind: Some("load".into()),
            limit: Some(usize::MAX >> 1),
            ..Default::default()
        })
        .unwrap();
    let mut pairs: Vec<(u64, u64)> = ops
        .iter()
        .map(|o| (o.data["c"].as_u64().unwrap(), o.data["i"].as_u64().unwrap()))
        .filter(|&(_, i)| i < 1_000_000)
        .collect();
    let measured = pairs.len();
    pairs.sort_unstable();
    pairs.dedup();
    (ops.len(), pairs.len(), measured - pairs.len())
}
