//! seqid inside a service: tickets numbered per project, gapless invoices, over HTTP.
//!
//! ```sh
//! cargo run --example service     # listens on 127.0.0.1:3000 (SEQID_SERVICE_ADDR)
//! curl -si -X POST localhost:3000/projects/apollo/tickets \
//!      -H 'content-type: application/json' -d '{"title": "Launch", "request": "r1"}'
//! ```
//!
//! The database is the one the tests use: `MONGODB_URI` if set, else a `mongod` on PATH,
//! else a local SecantusDB server installed on first use (`seqid-harness`). The routes,
//! the layers and the errors are in `app.rs`, which the load generator
//! (`cargo run --release --example bench -- --only service`) and `tests/service.rs`
//! start too. `SEQID_SERVICE_MODE=by-hand` runs the same service numbering with the
//! tutorial's two calls instead of seqid, and `SEQID_SERVICE_MODE=objectid` storing its
//! tickets under an ObjectId, numbered nothing (invoices refused); `RUST_LOG` sets the log
//! filter.
//!
//! ctrl-c (or SIGTERM) stops accepting, lets the requests in progress finish, waits for
//! the invoice transactions still running, and exits.

mod app;

use app::{App, Config, Mode};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("info,tower_http=debug,seqid=debug")),
        )
        // A line as each span closes, with its time busy and idle: every request's, and
        // inside it every insert's (`seqid.insert`, with its reservations and outcome).
        .with_span_events(FmtSpan::CLOSE)
        .init();

    let mode = match std::env::var("SEQID_SERVICE_MODE").as_deref() {
        Ok("by-hand") => Mode::ByHand,
        Ok("objectid") => Mode::ObjectId,
        Ok("seqid") | Err(_) => Mode::Seqid,
        Ok(other) => {
            return Err(format!("SEQID_SERVICE_MODE={other:?}: seqid, by-hand or objectid").into());
        }
    };
    // One client and one `Sequences` handle for the whole process, next to each other:
    // every request shares the handle's blocks and round trips.
    let client = seqid_harness::client().await?;
    let sequences = seqid::Sequences::new(&client);
    let app = App::new(&sequences, "seqid_service", mode);
    app.prepare().await?;

    let addr = std::env::var("SEQID_SERVICE_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    tracing::info!(
        "seqid service ({}) on http://{}, database {} on {}",
        mode.label(),
        listener.local_addr()?,
        app.db().name(),
        seqid_harness::server_kind()?
    );
    app::serve(listener, app.router(&Config::default()), shutdown_signal()).await?;
    tracing::info!("stopped accepting; waiting for invoice transactions in progress");
    app.drain().await;
    client.shutdown().await;
    tracing::info!("bye");
    Ok(())
}

/// Completes on ctrl-c (SIGINT) or SIGTERM, what a terminal and a process manager send.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for ctrl-c: {error}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!("cannot listen for SIGTERM: {error}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("ctrl-c: shutting down"),
        () = terminate => tracing::info!("SIGTERM: shutting down"),
    }
}
