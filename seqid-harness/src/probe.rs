//! Asking a server whether it answers, and which version and pid it has.

use std::time::Duration;

use mongodb::Client;
use mongodb::bson::{Bson, doc};
use mongodb::options::ClientOptions;

use crate::runtime::on_own_runtime;

/// What [`probe`] learned about a server.
pub(crate) struct ServerInfo {
    pub(crate) version: Option<String>,
    pub(crate) pid: Option<i64>,
}

impl ServerInfo {
    /// The version, for descriptions.
    pub(crate) fn version_or_unknown(&self) -> &str {
        self.version.as_deref().unwrap_or("(unknown version)")
    }
}

/// [`probe`] from sync code (or from inside any runtime).
pub(crate) fn probe_blocking(uri: &str, timeout: Duration) -> Result<ServerInfo, String> {
    on_own_runtime(probe(uri.to_owned(), timeout))
        .unwrap_or_else(|_| Err("the probe panicked".into()))
}

/// `ping`s the server, then asks for its version and pid (best effort).
async fn probe(uri: String, timeout: Duration) -> Result<ServerInfo, String> {
    let mut options = ClientOptions::parse(&uri)
        .await
        .map_err(|e| e.to_string())?;
    options.server_selection_timeout = Some(timeout);
    options.connect_timeout = Some(timeout);
    let client = Client::with_options(options).map_err(|e| e.to_string())?;
    let admin = client.database("admin");
    let result = async {
        admin
            .run_command(doc! { "ping": 1 })
            .await
            .map_err(|e| e.to_string())?;
        let status = admin
            .run_command(doc! { "serverStatus": 1 })
            .await
            .unwrap_or_default();
        let pid = match status.get("pid") {
            Some(Bson::Int32(n)) => Some(i64::from(*n)),
            Some(Bson::Int64(n)) => Some(*n),
            Some(Bson::Double(n)) => Some(*n as i64),
            _ => None,
        };
        let mut version = status.get_str("version").ok().map(str::to_owned);
        if version.is_none() {
            let build_info = admin.run_command(doc! { "buildInfo": 1 }).await;
            version = build_info
                .ok()
                .and_then(|b| b.get_str("version").ok().map(str::to_owned));
        }
        Ok(ServerInfo { version, pid })
    };
    let result = tokio::time::timeout(timeout * 2, result)
        .await
        .unwrap_or_else(|_| Err("timed out".into()));
    client.shutdown().await;
    result
}
