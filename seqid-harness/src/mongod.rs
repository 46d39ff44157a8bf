//! `mongod` from `PATH` (step 2): the command line that starts it.

use std::fs;
use std::path::Path;

use crate::probe::ServerInfo;
use crate::util::{display_path, path_arg};

/// The files in the temporary directory whose tails are shown on failure.
pub(crate) const LOG_FILES: &[&str] = &["console.log", "mongod.log"];

/// The command (run by the watchdog) that starts the `mongod` at `bin` on
/// `port`, with its database in `dbpath` (created if missing) and its log in
/// `temp`.
pub(crate) fn command(bin: &Path, port: u16, temp: &Path, dbpath: &Path) -> Vec<String> {
    let _ = fs::create_dir_all(dbpath);
    vec![
        path_arg(bin),
        "--port".into(),
        port.to_string(),
        "--bind_ip".into(),
        "127.0.0.1".into(),
        "--dbpath".into(),
        path_arg(dbpath),
        "--logpath".into(),
        path_arg(&temp.join("mongod.log")),
        "--nounixsocket".into(),
        // Many test processes may each run a mongod at the same time.
        "--wiredTigerCacheSizeGB".into(),
        "0.25".into(),
    ]
}

/// How a started `mongod` is described by [`server_kind`](crate::server_kind).
pub(crate) fn describe(bin: &Path, port: u16, info: &ServerInfo) -> String {
    format!(
        "mongod {} ({}) on 127.0.0.1:{port}",
        info.version_or_unknown(),
        display_path(bin)
    )
}
