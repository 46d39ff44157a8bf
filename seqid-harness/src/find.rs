//! Choosing the server: `MONGODB_URI`, else `mongod` on `PATH`, else
//! SecantusDB (or nx-27017 when asked for).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::probe::probe_blocking;
use crate::start::{LocalKind, Program, start_local};
use crate::{HarnessError, Server, nx, secantus};

/// Which kind of server this process's tests run against, see
/// [`server_flavor`](crate::server_flavor).
///
/// Meant for documenting (and, where unavoidable, working around) a
/// server-specific quirk in a test, with a comment naming the server and the
/// quirk; never for skipping a test.
///
/// ```no_run
/// use seqid_harness::ServerFlavor;
///
/// // nx-27017 returns small Int64 values as Int32.
/// let ints_may_shrink = seqid_harness::server_flavor()? == ServerFlavor::Nx;
/// # Ok::<(), seqid_harness::HarnessError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerFlavor {
    /// The server named by `MONGODB_URI` (step 1), presumably a real MongoDB.
    External,
    /// `mongod` from `PATH` (step 2).
    Mongod,
    /// SecantusDB, the default embedded server (step 3).
    Secantus,
    /// nx-27017, the alternative embedded server (`SEQID_TEST_SERVER=nx`).
    Nx,
}

/// What `SEQID_TEST_SERVER` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Unset, empty or `auto`: `mongod` if on `PATH`, else SecantusDB.
    Auto,
    /// `mongod`: only `mongod` from `PATH`.
    Mongod,
    /// `secantus`: only SecantusDB.
    Secantus,
    /// `nx`: only nx-27017.
    Nx,
}

/// Parses the value of `SEQID_TEST_SERVER`.
pub(crate) fn parse_choice(value: &str) -> Result<Choice, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "auto" => Ok(Choice::Auto),
        "mongod" => Ok(Choice::Mongod),
        "secantus" | "secantusdb" => Ok(Choice::Secantus),
        "nx" | "nx-27017" => Ok(Choice::Nx),
        _ => Err(format!(
            "SEQID_TEST_SERVER={value:?} is not understood (use `secantus`, `nx`, `mongod` or `auto`, or unset it)"
        )),
    }
}

/// Finds (and, for steps 2 and 3, starts) this process's server, or a
/// [`TestServer`](crate::TestServer) of its own.
pub(crate) fn find_server() -> Result<Server, HarnessError> {
    if let Ok(uri) = std::env::var("MONGODB_URI")
        && !uri.trim().is_empty()
    {
        return external_server(uri.trim());
    }
    local_server(local_kind()?, None)
}

/// Steps 2 and 3 as `SEQID_TEST_SERVER` chooses: `mongod` from `PATH`, or
/// SecantusDB or nx-27017, installed first if needed; its data thrown away.
pub(crate) fn local_kind() -> Result<LocalKind, HarnessError> {
    let choice = std::env::var("SEQID_TEST_SERVER").unwrap_or_default();
    let choice = parse_choice(&choice).map_err(|msg| HarnessError::no_server(msg, ""))?;
    if matches!(choice, Choice::Auto | Choice::Mongod) {
        if let Some(mongod) = find_on_path("mongod") {
            return Ok(LocalKind::throwaway(Program::Mongod(mongod)));
        }
        if choice == Choice::Mongod {
            return Err(HarnessError::no_server(
                "SEQID_TEST_SERVER=mongod is set but there is no `mongod` on PATH",
                "",
            ));
        }
    }
    let program = if choice == Choice::Nx {
        Program::Nx(nx::PACKAGE.ensure_installed()?)
    } else {
        Program::Secantus(secantus::PACKAGE.ensure_installed()?)
    };
    Ok(LocalKind::throwaway(program))
}

/// Steps 2 and 3: start `kind` on `port` (a free one if `None`), e.g. again,
/// for a fresh server of the same kind.
pub(crate) fn local_server(kind: LocalKind, port: Option<u16>) -> Result<Server, HarnessError> {
    let started = start_local(&kind, port)?;
    Ok(Server::new(
        started.uri,
        Some(started.port),
        started.kind,
        kind.flavor(),
        Some(started.watchdog),
        Some(kind),
    ))
}

/// Step 1: check that `MONGODB_URI` answers, and describe it.
fn external_server(uri: &str) -> Result<Server, HarnessError> {
    match probe_blocking(uri, Duration::from_secs(30)) {
        Ok(info) => {
            let hosts = uri_hosts(uri);
            Ok(Server::new(
                uri.to_owned(),
                None,
                format!(
                    "MongoDB {} from MONGODB_URI ({hosts})",
                    info.version_or_unknown()
                ),
                ServerFlavor::External,
                None,
                None,
            ))
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
    fn seqid_test_server_values() {
        assert_eq!(parse_choice(""), Ok(Choice::Auto));
        assert_eq!(parse_choice(" auto "), Ok(Choice::Auto));
        assert_eq!(parse_choice("mongod"), Ok(Choice::Mongod));
        assert_eq!(parse_choice("secantus"), Ok(Choice::Secantus));
        assert_eq!(parse_choice("SecantusDB"), Ok(Choice::Secantus));
        assert_eq!(parse_choice("nx"), Ok(Choice::Nx));
        assert_eq!(parse_choice("nx-27017"), Ok(Choice::Nx));
        let err = parse_choice("mongo").unwrap_err();
        assert!(err.contains("\"mongo\" is not understood"), "{err}");
        assert!(
            err.contains("`secantus`, `nx`, `mongod` or `auto`"),
            "{err}"
        );
    }

    #[test]
    fn hosts_hide_credentials() {
        assert_eq!(uri_hosts("mongodb://u:p@h1:1,h2:2/db?x=1"), "h1:1,h2:2");
        assert_eq!(uri_hosts("mongodb://h:1"), "h:1");
    }
}
