//! SecantusDB, the default embedded server (step 3): its pip package and the
//! command line that starts it.

use std::fs;
use std::path::Path;

use crate::pip::PipPackage;
use crate::util::path_arg;

/// The SecantusDB version installed and started by default (step 3).
///
/// ```no_run
/// println!("embedded server: SecantusDB {}", seqid_harness::SECANTUS_VERSION);
/// ```
pub const SECANTUS_VERSION: &str = "0.7.0b3";

/// Exact pins of SecantusDB and its dependencies, handed to `pip install -r`.
const SECANTUS_REQUIREMENTS: &str = include_str!("../python/secantusdb-requirements.txt");
/// Runs SecantusDB's `secantusd-py` from the project-local install directory.
const SECANTUS_LAUNCHER_PY: &str = include_str!("../python/secantus_launcher.py");

/// SecantusDB and its pinned dependencies, installed on first use.
pub(crate) const PACKAGE: PipPackage = PipPackage {
    name: "secantusdb",
    version: SECANTUS_VERSION,
    requirements: SECANTUS_REQUIREMENTS,
    marker: "secantus/cli.py",
    launcher: SECANTUS_LAUNCHER_PY,
};

/// The files in the temporary directory whose tails are shown on failure.
pub(crate) const LOG_FILES: &[&str] = &["console.log"];

/// The command (run by the watchdog, in `temp`) that starts SecantusDB from
/// `install` on `port`: in memory, or with its data in `data` (a WiredTiger
/// home, created if missing, reopened intact across restarts).
pub(crate) fn command(install: &Path, port: u16, temp: &Path, data: Option<&Path>) -> Vec<String> {
    // An explicit (empty) configuration file turns off the discovery of
    // ./secantusd.toml, ~/.secantus/secantusd.toml and /etc/secantus/.
    let config = temp.join("secantusd.toml");
    let _ = fs::write(&config, "");
    let storage = data.map_or_else(|| ":memory:".into(), path_arg);
    PACKAGE.command(
        install,
        vec![
            "--config".into(),
            path_arg(&config),
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
            "--storage-path".into(),
            storage,
            // configureFailPoint, for fault tests.
            "--enable-test-commands".into(),
            // Many test processes may each run a server at the same time.
            "--cache-size".into(),
            "256M".into(),
        ],
    )
}

/// How a started SecantusDB is described by [`server_kind`](crate::server_kind).
pub(crate) fn describe(port: u16) -> String {
    format!("SecantusDB {SECANTUS_VERSION} on 127.0.0.1:{port}")
}
