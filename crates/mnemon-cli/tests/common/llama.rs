//! A real llama.cpp `llama-server`, built from the sources on PyPI by
//! `scripts/llama-server.sh` (cached under `~/.cache/mnemon/`), serving
//! SmolLM2-135M-Instruct with `-c 2048` (trained window 8,192).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The built server and the model, built once per test run.
pub fn paths() -> &'static (PathBuf, PathBuf) {
    static PATHS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    PATHS.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llama-server.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg("paths")
            .stderr(Stdio::inherit())
            .output()
            .expect("run scripts/llama-server.sh");
        assert!(
            out.status.success(),
            "scripts/llama-server.sh paths failed; it builds llama-server from PyPI sources"
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let mut parts = text.split_whitespace();
        let bin = PathBuf::from(parts.next().unwrap());
        let model = PathBuf::from(parts.next().unwrap());
        (bin, model)
    })
}

/// A running `llama-server`, killed when dropped.
pub struct Llama {
    child: Child,
    pub port: u16,
}

impl Llama {
    pub fn start(extra: &[&str]) -> Llama {
        let (bin, model) = paths();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(bin)
            .arg("-m")
            .arg(model)
            .args(["-c", "2048", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(["-t", "2", "--no-webui"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start llama-server");
        let l = Llama { child, port };
        let start = Instant::now();
        loop {
            if get(port, "/health").starts_with("HTTP/1.1 200") {
                return l;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "llama-server did not become healthy in 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Llama {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A plain HTTP GET on loopback, without a client the machine may lack:
/// the status line and body, or nothing while the server is not up.
pub fn get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return String::new();
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}
