//! Throwaway PostgreSQL databases, for the tests and benchmarks that run the
//! store on a real server: each gets a database of its own, dropped when done.

use std::sync::atomic::{AtomicU32, Ordering};

use super::StateUrl;

/// The server the tests use: `$LUNTAN_TEST_POSTGRES`, else the local one
/// (trust authentication as user `postgres`, as Debian's package sets it up).
pub fn test_server() -> String {
    std::env::var("LUNTAN_TEST_POSTGRES").ok().filter(|v| !v.trim().is_empty()).unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A new, empty database on a server, dropped (with any sessions still on
/// it) when this is dropped.
#[derive(Debug)]
pub struct ScratchDb {
    server: String,
    name: String,
    url: StateUrl,
}

impl ScratchDb {
    /// Creates a database on [`test_server`]; the error says which server
    /// could not be reached and how to name another.
    pub fn create() -> Result<ScratchDb, ScratchError> {
        ScratchDb::create_on(&test_server())
    }

    /// Creates a database on the server `server` (a `postgres://` URL of
    /// any database on it, used only to create and drop this one).
    pub fn create_on(server: &str) -> Result<ScratchDb, ScratchError> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        // Only digits and lower-case letters, so the name needs no quoting.
        let name = format!("luntan_scratch_{}_{}_{nanos}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed));
        let mut admin = connect(server)?;
        admin.batch_execute(&format!("CREATE DATABASE {name}")).map_err(|source| ScratchError::Create { server: StateUrl::Postgres(server.into()), source })?;
        let mut config: url::Url = server.parse().map_err(|source| ScratchError::NotUrl { server: server.to_owned(), source })?;
        config.set_path(&name);
        Ok(ScratchDb { server: server.to_owned(), url: StateUrl::Postgres(config.to_string()), name })
    }

    /// The database, as the stages take it (`--state`).
    pub fn url(&self) -> &StateUrl {
        &self.url
    }
}

impl Drop for ScratchDb {
    fn drop(&mut self) {
        if let Ok(mut admin) = connect(&self.server) {
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
        }
    }
}

/// Why no scratch database could be had; the server is shown as a
/// `StateUrl` is, its password replaced.
#[derive(Debug, thiserror::Error)]
pub enum ScratchError {
    #[error("{server}: cannot reach PostgreSQL ({source}); the tests need a server: start one, or name it in LUNTAN_TEST_POSTGRES")]
    Unreachable { server: StateUrl, source: postgres::Error },
    #[error("{server}: cannot create a scratch database: {source}")]
    Create { server: StateUrl, source: postgres::Error },
    #[error("{server}: {source}")]
    NotUrl { server: String, source: url::ParseError },
}

fn connect(server: &str) -> Result<postgres::Client, ScratchError> {
    postgres::Client::connect(server, postgres::NoTls).map_err(|source| ScratchError::Unreachable { server: StateUrl::Postgres(server.into()), source })
}
