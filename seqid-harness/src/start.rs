//! Starting a local server (mongod, SecantusDB or nx-27017) under the
//! watchdog on a free port, and waiting until it answers; restarting one.

use std::fs;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use crate::probe::{ServerInfo, probe_blocking};
use crate::util::{display_path, nanos, tail_of};
use crate::watchdog::Watchdog;
use crate::{HarnessError, PYTHON, ServerFlavor, mongod, nx, secantus};

/// How long a local server may take to answer a `ping` after being started.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// How many free ports are tried when a local server exits during startup.
const START_ATTEMPTS: u32 = 3;
/// How many times a restart on the same port is tried when the server exits
/// during startup (e.g. because the port is briefly unavailable).
const RESTART_ATTEMPTS: u32 = 5;

/// Which local server to start.
#[derive(Clone)]
pub(crate) enum LocalKind {
    /// Path of the `mongod` binary.
    Mongod(PathBuf),
    /// SecantusDB's install directory (pip `--target`); in memory unless
    /// `persistent`, then in the temporary directory, across restarts.
    Secantus {
        /// The install directory.
        install: PathBuf,
        /// Whether the data lives in a directory rather than in memory.
        persistent: bool,
    },
    /// The nx-27017 install directory (pip `--target`).
    Nx(PathBuf),
}

impl LocalKind {
    fn command(&self, port: u16, temp: &Path) -> Vec<String> {
        match self {
            LocalKind::Mongod(bin) => mongod::command(bin, port, temp),
            LocalKind::Secantus {
                install,
                persistent,
            } => secantus::command(install, port, temp, *persistent),
            LocalKind::Nx(install) => nx::command(install, port, temp),
        }
    }

    fn describe(&self, port: u16, info: &ServerInfo) -> String {
        match self {
            LocalKind::Mongod(bin) => mongod::describe(bin, port, info),
            LocalKind::Secantus { .. } => secantus::describe(port),
            LocalKind::Nx(_) => nx::describe(port),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            LocalKind::Mongod(_) => "mongod",
            LocalKind::Secantus { .. } => "SecantusDB",
            LocalKind::Nx(_) => "nx-27017",
        }
    }

    pub(crate) fn flavor(&self) -> ServerFlavor {
        match self {
            LocalKind::Mongod(_) => ServerFlavor::Mongod,
            LocalKind::Secantus { .. } => ServerFlavor::Secantus,
            LocalKind::Nx(_) => ServerFlavor::Nx,
        }
    }

    fn log_files(&self) -> &'static [&'static str] {
        match self {
            LocalKind::Mongod(_) => mongod::LOG_FILES,
            LocalKind::Secantus { .. } => secantus::LOG_FILES,
            LocalKind::Nx(_) => nx::LOG_FILES,
        }
    }

    /// The tails of the log files in `temp`, for error messages.
    fn logs(&self, temp: &Path) -> String {
        let mut logs = String::new();
        for file in self.log_files() {
            let tail = tail_of(&temp.join(file), 4000);
            if !tail.trim().is_empty() {
                logs.push_str(&format!("--- end of {} ---\n{}\n", file, tail.trim_end()));
            }
        }
        logs
    }
}

/// A local server that answers, run by its watchdog.
pub(crate) struct Started {
    /// The connection string (`directConnection=true`).
    pub(crate) uri: String,
    /// The loopback port it listens on.
    pub(crate) port: u16,
    /// Its description, see [`server_kind`](crate::server_kind).
    pub(crate) kind: String,
    /// Runs the server; the server stops when this is stopped or dropped.
    pub(crate) watchdog: Watchdog,
}

/// Why one attempt to start a local server failed.
enum StartFailure {
    /// The server (or watchdog) exited; worth another port.
    Exited(String),
    /// It never answered, or could not be launched at all.
    Fatal(String),
}

/// Starts a server under the watchdog and waits until it answers.
pub(crate) fn start_local(kind: &LocalKind) -> Result<Started, HarnessError> {
    let mut failures = Vec::new();
    for attempt in 1..=START_ATTEMPTS {
        let started = Instant::now();
        match start_once(kind, attempt) {
            Ok(server) => {
                if std::env::var_os("SEQID_HARNESS_DEBUG").is_some() {
                    eprintln!(
                        "seqid-harness: started {} in {:?}",
                        server.kind,
                        started.elapsed()
                    );
                }
                return Ok(server);
            }
            Err(StartFailure::Exited(details)) => failures.push(details),
            Err(StartFailure::Fatal(details)) => {
                failures.push(details);
                break;
            }
        }
    }
    let mut last = failures.pop().unwrap_or_default();
    if let LocalKind::Mongod(bin) = kind {
        last.push_str(&format!(
            "(`mongod` was found at {}; set SEQID_TEST_SERVER=secantus to use SecantusDB, \
             or SEQID_TEST_SERVER=nx to use nx-27017, instead.)\n",
            display_path(bin)
        ));
    }
    Err(HarnessError::no_server(
        format_args!(
            "{} could not be started ({} attempt(s))",
            kind.name(),
            failures.len() + 1
        ),
        &last,
    ))
}

fn start_once(kind: &LocalKind, attempt: u32) -> Result<Started, StartFailure> {
    let temp = std::env::temp_dir().join(format!(
        "seqid-harness-{}-{attempt}-{}",
        std::process::id(),
        nanos()
    ));
    fs::create_dir_all(&temp)
        .map_err(|e| StartFailure::Fatal(format!("cannot create {}: {e}", display_path(&temp))))?;
    let port = match free_port() {
        Ok(port) => port,
        Err(e) => {
            let _ = fs::remove_dir_all(&temp);
            return Err(StartFailure::Fatal(format!("cannot find a free port: {e}")));
        }
    };
    let command = kind.command(port, &temp);
    let mut watchdog = match Watchdog::spawn(&temp, &command) {
        Ok(watchdog) => watchdog,
        Err(msg) => {
            let _ = fs::remove_dir_all(&temp);
            return Err(StartFailure::Fatal(msg));
        }
    };
    let uri = format!("mongodb://127.0.0.1:{port}/?directConnection=true");

    match wait_ready(&uri, port, &mut watchdog) {
        Ok(info) => {
            watchdog.ready();
            Ok(Started {
                uri,
                port,
                kind: kind.describe(port, &info),
                watchdog,
            })
        }
        Err(failure) => {
            // Read the logs before the watchdog removes them.
            let logs = kind.logs(&temp);
            watchdog.stop();
            let with_logs =
                |msg: String| format!("{} on 127.0.0.1:{port}: {msg}\n{logs}", kind.name());
            Err(match failure {
                StartFailure::Exited(msg) => StartFailure::Exited(with_logs(msg)),
                StartFailure::Fatal(msg) => StartFailure::Fatal(with_logs(msg)),
            })
        }
    }
}

/// Starts the server of `started` again, on the same port and in the same
/// temporary directory, after it was killed, and waits until it answers.
pub(crate) fn restart(kind: &LocalKind, started: &mut Started) -> Result<(), HarnessError> {
    let mut last = String::new();
    for attempt in 1..=RESTART_ATTEMPTS {
        if attempt > 1 {
            thread::sleep(Duration::from_millis(200 * u64::from(attempt)));
        }
        let watchdog = &mut started.watchdog;
        let answer = watchdog.request("start").map_err(HarnessError::other)?;
        if !answer.starts_with("started") {
            return Err(HarnessError::other(format!(
                "seqid-harness: cannot restart {}: {answer}",
                kind.name()
            )));
        }
        match wait_ready(&started.uri, started.port, watchdog) {
            Ok(_) => {
                watchdog.ready();
                return Ok(());
            }
            Err(StartFailure::Exited(msg)) => last = msg,
            Err(StartFailure::Fatal(msg)) => {
                last = msg;
                let _ = watchdog.request("kill");
                break;
            }
        }
    }
    Err(HarnessError::other(format!(
        "seqid-harness: {} could not be restarted on 127.0.0.1:{}: {last}\n{}",
        kind.name(),
        started.port,
        kind.logs(started.watchdog.temp()).trim_end()
    )))
}

/// Polls until the server we started answers `ping` on `port`.
fn wait_ready(uri: &str, port: u16, watchdog: &mut Watchdog) -> Result<ServerInfo, StartFailure> {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut last_error = String::from("nothing listens on the port");
    let mut foreign_since: Option<Instant> = None;
    loop {
        if let Some(exit) = watchdog.server_exit() {
            return Err(StartFailure::Exited(format!(
                "the server exited during startup ({})",
                exit.trim()
            )));
        }
        match watchdog.try_wait() {
            Ok(Some(status)) => {
                return Err(StartFailure::Exited(format!(
                    "the watchdog ({PYTHON}) exited during startup with {status}"
                )));
            }
            Ok(None) => {}
            Err(e) => {
                return Err(StartFailure::Fatal(format!(
                    "cannot watch the watchdog: {e}"
                )));
            }
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(250)).is_ok() {
            match probe_blocking(uri, Duration::from_secs(5)) {
                Ok(info) => {
                    // Make sure it is our server, not another one that got the
                    // port between our probe for a free port and our server's
                    // bind. Should the pid not be comparable (e.g. a launcher
                    // that forks), a server that is still alive after two
                    // seconds is taken to be ours: a failed bind exits at once.
                    let ours = watchdog.server_pid();
                    if info.pid.is_none() || info.pid == ours {
                        return Ok(info);
                    }
                    let since = *foreign_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > Duration::from_secs(2) {
                        return Ok(info);
                    }
                    last_error = format!(
                        "the server on the port has pid {:?}, ours has {ours:?}",
                        info.pid
                    );
                }
                Err(e) => last_error = e,
            }
        }
        if Instant::now() >= deadline {
            return Err(StartFailure::Fatal(format!(
                "the server did not answer within {} s (last error: {last_error})",
                STARTUP_TIMEOUT.as_secs()
            )));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

fn free_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}
