//! The accept loop: HTTP/1 connections served by hyper with the API
//! router, a header read timeout, and a bounded graceful shutdown.
//!
//! `axum::serve` cannot time out a client that trickles its request
//! headers, so connections are served here with hyper's own HTTP/1
//! builder: a connection whose request headers are not complete within
//! `http.header_read_timeout_ms` (default 10 s) is closed. Body and handler
//! time limits are the router's ([`relay_api::layers`]). Every request
//! carries the peer address as axum's `ConnectInfo<SocketAddr>` (rate
//! limits read it). On shutdown the listener closes at once, open
//! connections finish their current request (idle keep-alive connections
//! close), and whatever is still open after [`SHUTDOWN_DRAIN`] is dropped.

use std::{future::Future, net::SocketAddr, time::Duration};

use axum::{extract::ConnectInfo, Router};
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    server::graceful::GracefulShutdown,
    service::TowerToHyperService,
};
use relay_config::HttpConfig;
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::server::SHUTDOWN_DRAIN;

/// Serves `app` on `listener` until `shutdown` resolves, then drains.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    http: &HttpConfig,
    shutdown: impl Future<Output = ()> + Send,
) {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(http.header_read_timeout_ms))
        // twice the host's own cap: the router answers those in between
        // with its JSON 431 instead of hyper's empty one
        .max_headers(2 * HttpConfig::MAX_HEADERS);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors and the like: back off briefly
                    // rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Answers and server-sent events are small writes: never held
        // back waiting for the client's delayed acknowledgement.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, %peer, "TCP_NODELAY not set");
        }
        let service = app
            .clone()
            .map_request(move |mut req: hyper::Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
                req
            });
        let conn =
            builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, %peer, "connection closed with an error");
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_DRAIN) => {
            tracing::warn!("connections still open after the drain period; stopping anyway");
        }
    }
}
