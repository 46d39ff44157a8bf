//! Choosing the server: `MONGODB_URI`, else `mongod` on `PATH`, else nx-27017.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::probe::probe_blocking;
use crate::start::{LocalKind, start_local};
use crate::{HarnessError, Server, nx};

/// Finds (and, for steps 2 and 3, starts) this process's server.
pub(crate) fn find_server() -> Result<Server, HarnessError> {
    if let Ok(uri) = std::env::var("MONGODB_URI")
        && !uri.trim().is_empty()
    {
        return external_server(uri.trim());
    }
    let choice = std::env::var("SEQID_TEST_SERVER").unwrap_or_default();
    let (try_mongod, try_nx) = match choice.trim() {
        "" | "auto" => (true, true),
        "nx" | "nx-27017" => (false, true),
        "mongod" => (true, false),
        other => {
            return Err(HarnessError::no_server(
                format_args!(
                    "SEQID_TEST_SERVER={other:?} is not understood (use `nx`, `mongod` or `auto`, or unset it)"
                ),
                "",
            ));
        }
    };
    if try_mongod {
        if let Some(mongod) = find_on_path("mongod") {
            return start_local(&LocalKind::Mongod(mongod));
        }
        if !try_nx {
            return Err(HarnessError::no_server(
                "SEQID_TEST_SERVER=mongod is set but there is no `mongod` on PATH",
                "",
            ));
        }
    }
    let install = nx::ensure_installed()?;
    start_local(&LocalKind::Nx(install))
}

/// Step 1: check that `MONGODB_URI` answers, and describe it.
fn external_server(uri: &str) -> Result<Server, HarnessError> {
    match probe_blocking(uri, Duration::from_secs(30)) {
        Ok(info) => {
            let hosts = uri_hosts(uri);
            Ok(Server {
                uri: uri.to_owned(),
                kind: format!(
                    "MongoDB {} from MONGODB_URI ({hosts})",
                    info.version_or_unknown()
                ),
                _watchdog: None,
            })
        }
        Err(e) => Err(HarnessError::no_server(
            format_args!("MONGODB_URI is set but the server does not answer `ping`: {e}"),
            "Fix MONGODB_URI, or unset it to use a local server.",
        )),
    }
}

/// The host list of a connection string, without credentials or options.
fn uri_hosts(uri: &str) -> String {
    let rest = uri.split_once("://").map_or(uri, |(_, rest)| rest);
    let rest = rest.split(['/', '?']).next().unwrap_or("");
    let hosts = rest.rsplit_once('@').map_or(rest, |(_, hosts)| hosts);
    hosts.to_owned()
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file() || path.with_extension("exe").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_hide_credentials() {
        assert_eq!(uri_hosts("mongodb://u:p@h1:1,h2:2/db?x=1"), "h1:1,h2:2");
        assert_eq!(uri_hosts("mongodb://h:1"), "h:1");
    }
}
