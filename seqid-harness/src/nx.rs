//! nx-27017, the alternative embedded server (`SEQID_TEST_SERVER=nx`): its
//! pip package and the command line that starts it.

use std::path::Path;

use crate::pip::PipPackage;
use crate::util::path_arg;

/// The nx-27017 version installed and started with `SEQID_TEST_SERVER=nx`.
///
/// ```no_run
/// println!("alternative server: nx-27017 {}", seqid_harness::NX_VERSION);
/// ```
pub const NX_VERSION: &str = "0.8.1";

/// Exact pins of nx-27017 and its dependencies, handed to `pip install -r`.
const NX_REQUIREMENTS: &str = include_str!("../python/nx-27017-requirements.txt");
/// Runs nx-27017's `main` from the project-local install directory.
const NX_LAUNCHER_PY: &str = include_str!("../python/nx_launcher.py");

/// The files in the temporary directory whose tails are shown on failure.
pub(crate) const LOG_FILES: &[&str] = &["console.log", "nx-27017.log"];

/// The command (run by the watchdog) that starts nx-27017 from `install` on
/// `port`, with in-memory databases, or with one SQLite file per database in
/// `data`, and its pid and log files in `temp`.
pub(crate) fn command(install: &Path, port: u16, temp: &Path, data: Option<&Path>) -> Vec<String> {
    PACKAGE.command(
        install,
        vec![
            "--data-dir".into(),
            data.map_or_else(|| "memory".into(), path_arg),
            "-p".into(),
            port.to_string(),
            "--pid-file".into(),
            path_arg(&temp.join("nx-27017.pid")),
            "--log-file".into(),
            path_arg(&temp.join("nx-27017.log")),
        ],
    )
}

/// How a started nx-27017 is described by [`server_kind`](crate::server_kind).
pub(crate) fn describe(port: u16) -> String {
    format!("nx-27017 {NX_VERSION} on 127.0.0.1:{port}")
}

/// nx-27017 and its pinned dependencies, installed on first use.
pub(crate) const PACKAGE: PipPackage = PipPackage {
    name: "nx-27017",
    version: NX_VERSION,
    requirements: NX_REQUIREMENTS,
    marker: "nx_27017/__init__.py",
    launcher: NX_LAUNCHER_PY,
};
