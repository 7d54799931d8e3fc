//! Where the tests' database comes from: `MNEMON_TEST_DATABASE_URL` when it
//! is set (each test works in schemas of its own, dropped afterwards), else
//! a throwaway cluster from the machine's PostgreSQL binaries.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    dead_code,
    reason = "test support: a panic with its message is the failure report"
)]

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use mnemon_postgres::{Cluster, ClusterError, PgStore, Target};

/// A database for one test binary, or `None` (with the reason printed)
/// when there is none and none is required.
pub struct Database {
    pub url: String,
    tag: String,
    n: AtomicUsize,
    made: Mutex<Vec<String>>,
    cluster: Option<Cluster>,
}

impl Database {
    pub fn get() -> Option<Database> {
        let tag = format!(
            "{}_{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_micros()
        );
        if let Ok(url) = std::env::var("MNEMON_TEST_DATABASE_URL") {
            return Some(Database {
                url,
                tag,
                n: AtomicUsize::new(0),
                made: Mutex::default(),
                cluster: None,
            });
        }
        match Cluster::start() {
            Ok(c) => Some(Database {
                url: c.url(),
                tag,
                n: AtomicUsize::new(0),
                made: Mutex::default(),
                cluster: Some(c),
            }),
            Err(ClusterError::NoBinaries)
                if std::env::var_os("MNEMON_REQUIRE_POSTGRES").is_none() =>
            {
                eprintln!("skipped: no MNEMON_TEST_DATABASE_URL and no PostgreSQL binaries");
                None
            }
            Err(e) => panic!("cannot start a throwaway PostgreSQL cluster: {e}"),
        }
    }

    /// A schema nobody else uses.
    pub fn schema(&self) -> String {
        let s = format!("t_{}_{}", self.tag, self.n.fetch_add(1, Ordering::SeqCst));
        self.made.lock().unwrap().push(s.clone());
        s
    }

    pub fn target(&self) -> Target {
        Target::parse(&self.url).unwrap().schema(&self.schema())
    }

    pub fn fresh(&self) -> PgStore {
        PgStore::connect(self.target()).unwrap()
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if self.cluster.is_some() {
            return;
        }
        // A shared database: leave it as it was found.
        if let Ok(store) = PgStore::open(&self.url)
            && let Ok(db) = store.db()
        {
            for s in self.made.lock().unwrap().iter() {
                let _ = db.batch(&format!("DROP SCHEMA IF EXISTS {s} CASCADE"));
            }
        }
    }
}
