//! The accept loop: HTTP/1.1 on a TCP listener with the bounds
//! `axum::serve` does not set.
//!
//! - A connection must send a request's headers within
//!   [`ServeConfig::header_timeout`], the first request's and each next
//!   one's on a kept-alive connection alike, so an idle or slow-loris
//!   connection is closed instead of held (one that sent nothing was held
//!   past 45 s, and 1,000 of them took the process to 1,014 descriptors).
//! - At most [`ServeConfig::max_connections`] are served at once; past
//!   that, new connections wait in the kernel's accept queue, which costs
//!   the process no descriptor.
//! - On shutdown, idle connections close at once and requests in flight
//!   get [`DRAIN`] to finish.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::ServeConfig;

/// How long requests in flight may take to finish once shutdown is asked.
const DRAIN: Duration = Duration::from_secs(10);

pub(crate) async fn run(listener: TcpListener, app: Router, cfg: &ServeConfig, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(cfg.max_connections.max(1)));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(cfg.header_timeout);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Pages and JSON answers are written whole; Nagle would hold the last segment back.
        let _ = stream.set_nodelay(true);
        let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone())));
        tokio::spawn(async move {
            // A client gone or too slow ends its own connection; nothing to report.
            let _ = conn.await;
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown()).await.is_err() {
        tracing::warn!("requests still in flight after {DRAIN:?} were cut at shutdown");
    }
    Ok(())
}

/// A failed accept is the peer's (reset before it was taken: go on at once)
/// or the process's (out of descriptors: wait, as axum::serve does, rather
/// than spin on the error).
async fn accept_failed(e: &std::io::Error) {
    use std::io::ErrorKind::*;
    if matches!(e.kind(), ConnectionAborted | ConnectionReset | ConnectionRefused) {
        return;
    }
    tracing::warn!("accepting a connection: {e}");
    tokio::time::sleep(Duration::from_secs(1)).await;
}
