//! A throwaway PostgreSQL cluster from the machine's own binaries
//! (`initdb`, `pg_ctl`), on a free loopback port, removed when dropped: what
//! the tests run on when no database is named, and what `mnemon` users can
//! try PostgreSQL with (`scripts/postgres.sh` does the same from a shell).
//!
//! `initdb` refuses to run as root; as root the cluster is made and run by
//! the `postgres` system user instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(
        "no PostgreSQL binaries found (looked for initdb in $MNEMON_PG_BIN, /usr/lib/postgresql/*/bin, `pg_config --bindir` and PATH); install PostgreSQL or set MNEMON_PG_BIN"
    )]
    NoBinaries,
    #[error("{step} failed: {detail}")]
    Step { step: String, detail: String },
}

/// How the cluster runs.
#[derive(Debug, Clone, Copy)]
pub struct ClusterOptions {
    /// Off for tests (a throwaway cluster needs no crash safety); on to
    /// measure what a real server costs.
    pub fsync: bool,
    pub max_connections: u32,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            fsync: false,
            max_connections: 400,
        }
    }
}

/// A running cluster; stopped and deleted on drop.
#[derive(Debug)]
pub struct Cluster {
    base: PathBuf,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

fn step(name: &str, out: std::io::Result<Output>) -> Result<Output, ClusterError> {
    let out = out.map_err(|e| ClusterError::Step {
        step: name.to_string(),
        detail: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(ClusterError::Step {
            step: name.to_string(),
            detail: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr).trim(),
                String::from_utf8_lossy(&out.stdout).trim()
            ),
        });
    }
    Ok(out)
}

fn has_initdb(dir: &Path) -> bool {
    dir.join("initdb").is_file() && dir.join("pg_ctl").is_file()
}

impl Cluster {
    /// Where `initdb` and `pg_ctl` are: `$MNEMON_PG_BIN`, the newest
    /// `/usr/lib/postgresql/*/bin`, `pg_config --bindir`, or `PATH`.
    pub fn binaries() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("MNEMON_PG_BIN").map(PathBuf::from) {
            return has_initdb(&dir).then_some(dir);
        }
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let v: u32 = e.file_name().to_str()?.parse().ok()?;
                let bin = e.path().join("bin");
                has_initdb(&bin).then_some((v, bin))
            })
            .collect();
        versions.sort();
        if let Some((_, bin)) = versions.pop() {
            return Some(bin);
        }
        if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
            && out.status.success()
        {
            let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if has_initdb(&dir) {
                return Some(dir);
            }
        }
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .find(|d| has_initdb(d))
    }

    pub fn start() -> Result<Cluster, ClusterError> {
        Cluster::start_with(ClusterOptions::default())
    }

    pub fn start_with(opts: ClusterOptions) -> Result<Cluster, ClusterError> {
        let bin = Cluster::binaries().ok_or(ClusterError::NoBinaries)?;
        let as_postgres = is_root();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let base = std::env::temp_dir().join(format!("mnemon-pg-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&base).map_err(|e| ClusterError::Step {
            step: format!("creating {}", base.display()),
            detail: e.to_string(),
        })?;
        let mut cluster = Cluster {
            base,
            bin,
            port: 0,
            as_postgres,
        };
        if as_postgres {
            step(
                "chown to postgres",
                Command::new("chown")
                    .args(["-R", "postgres:"])
                    .arg(&cluster.base)
                    .output(),
            )?;
        }
        let data = cluster.data();
        let init = |locale: &str| {
            cluster
                .pg("initdb")
                .args(["-D"])
                .arg(&data)
                .args([
                    "-U",
                    "postgres",
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    locale,
                ])
                .output()
        };
        if step("initdb", init("--locale=C.UTF-8")).is_err() {
            let _ = std::fs::remove_dir_all(&data);
            step("initdb", init("--no-locale"))?;
        }
        // A port that was free a moment ago; another process may take it
        // first, so starting is tried a few times.
        let mut last = None;
        for _ in 0..5 {
            cluster.port = free_port();
            cluster.configure(opts)?;
            let log = cluster.base.join("server.log");
            match step(
                "pg_ctl start",
                cluster
                    .pg("pg_ctl")
                    .arg("-D")
                    .arg(&data)
                    .arg("-l")
                    .arg(&log)
                    .args(["-w", "-t", "60", "start"])
                    .output(),
            ) {
                Ok(_) => return Ok(cluster),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or(ClusterError::NoBinaries))
    }

    fn data(&self) -> PathBuf {
        self.base.join("data")
    }

    fn pg(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// Settings appended to `postgresql.conf` (the last one of a name wins).
    fn configure(&self, opts: ClusterOptions) -> Result<(), ClusterError> {
        use std::io::Write;
        let conf = self.data().join("postgresql.conf");
        let text = format!(
            "\n# mnemon's throwaway cluster\nport = {}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\nmax_connections = {}\nfsync = {}\nsynchronous_commit = {}\nfull_page_writes = {}\n",
            self.port,
            self.base.display(),
            opts.max_connections,
            on(opts.fsync),
            on(opts.fsync),
            on(opts.fsync),
        );
        std::fs::OpenOptions::new()
            .append(true)
            .open(&conf)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| ClusterError::Step {
                step: format!("writing {}", conf.display()),
                detail: e.to_string(),
            })
    }

    /// The server's log (`log_min_duration_statement` and the like write
    /// there).
    pub fn log_file(&self) -> PathBuf {
        self.base.join("server.log")
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The superuser's database over loopback, with trust authentication.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Creates a database and returns its URL.
    pub fn create_database(&self, name: &str) -> Result<String, ClusterError> {
        step(
            "createdb",
            Command::new(self.bin.join("createdb"))
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    "postgres",
                    name,
                ])
                .output(),
        )?;
        Ok(format!(
            "postgres://postgres@127.0.0.1:{}/{name}",
            self.port
        ))
    }
}

fn on(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .pg("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "-w", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(54_329)
}
