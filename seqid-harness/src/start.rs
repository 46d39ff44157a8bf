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

/// A local server to start: which program, and where its data lives.
#[derive(Clone)]
pub(crate) struct LocalKind {
    pub(crate) program: Program,
    pub(crate) storage: Storage,
}

/// Which local server program.
#[derive(Clone)]
pub(crate) enum Program {
    /// Path of the `mongod` binary.
    Mongod(PathBuf),
    /// SecantusDB's install directory (pip `--target`).
    Secantus(PathBuf),
    /// The nx-27017 install directory (pip `--target`).
    Nx(PathBuf),
}

/// Where a local server keeps its data.
#[derive(Clone)]
pub(crate) enum Storage {
    /// Gone when the server stops: in memory (SecantusDB, nx-27017), or in
    /// the server's temporary directory (`mongod`, which has no in-memory
    /// storage).
    Throwaway,
    /// In the server's temporary directory (`<temp>/db`), across restarts of
    /// the server, removed with that directory when the watchdog stops
    /// ([`RestartableServer`](crate::RestartableServer)).
    Restartable,
    /// In this directory (absolute), which outlives the server
    /// ([`TestServerBuilder::data_dir`](crate::TestServerBuilder::data_dir)).
    Kept(PathBuf),
}

impl Storage {
    /// The data directory; `None` for throwaway data, which SecantusDB and
    /// nx-27017 keep in memory (and `mongod` in `<temp>/db`).
    fn dir(&self, temp: &Path) -> Option<PathBuf> {
        match self {
            Storage::Throwaway => None,
            Storage::Restartable => Some(temp.join("db")),
            Storage::Kept(dir) => Some(dir.clone()),
        }
    }
}

impl LocalKind {
    /// `program` with its data thrown away when it stops.
    pub(crate) fn throwaway(program: Program) -> Self {
        LocalKind {
            program,
            storage: Storage::Throwaway,
        }
    }

    fn command(&self, port: u16, temp: &Path) -> Vec<String> {
        match &self.program {
            Program::Mongod(bin) => {
                let dbpath = self.storage.dir(temp).unwrap_or_else(|| temp.join("db"));
                mongod::command(bin, port, temp, &dbpath)
            }
            Program::Secantus(install) => {
                secantus::command(install, port, temp, self.storage.dir(temp).as_deref())
            }
            Program::Nx(install) => {
                nx::command(install, port, temp, self.storage.dir(temp).as_deref())
            }
        }
    }

    fn describe(&self, port: u16, info: &ServerInfo) -> String {
        match &self.program {
            Program::Mongod(bin) => mongod::describe(bin, port, info),
            Program::Secantus(_) => secantus::describe(port),
            Program::Nx(_) => nx::describe(port),
        }
    }

    fn name(&self) -> &'static str {
        match self.program {
            Program::Mongod(_) => "mongod",
            Program::Secantus(_) => "SecantusDB",
            Program::Nx(_) => "nx-27017",
        }
    }

    /// Whether the data outlives the server, which must then stop gracefully.
    pub(crate) fn keeps_data(&self) -> bool {
        matches!(self.storage, Storage::Kept(_))
    }

    pub(crate) fn flavor(&self) -> ServerFlavor {
        match self.program {
            Program::Mongod(_) => ServerFlavor::Mongod,
            Program::Secantus(_) => ServerFlavor::Secantus,
            Program::Nx(_) => ServerFlavor::Nx,
        }
    }

    fn log_files(&self) -> &'static [&'static str] {
        match self.program {
            Program::Mongod(_) => mongod::LOG_FILES,
            Program::Secantus(_) => secantus::LOG_FILES,
            Program::Nx(_) => nx::LOG_FILES,
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

/// Starts a server under the watchdog on `port` (a free one if `None`) and
/// waits until it answers.
pub(crate) fn start_local(kind: &LocalKind, port: Option<u16>) -> Result<Started, HarnessError> {
    if let Some(port) = port {
        check_free(port)?;
    }
    // Another free port may do where one was taken meanwhile; a port asked
    // for is the only one.
    let attempts = if port.is_some() { 1 } else { START_ATTEMPTS };
    let mut failures = Vec::new();
    for attempt in 1..=attempts {
        let started = Instant::now();
        match start_once(kind, port, attempt) {
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
    if let Program::Mongod(bin) = &kind.program {
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

fn start_once(kind: &LocalKind, port: Option<u16>, attempt: u32) -> Result<Started, StartFailure> {
    let temp = std::env::temp_dir().join(format!(
        "seqid-harness-{}-{attempt}-{}",
        std::process::id(),
        nanos()
    ));
    fs::create_dir_all(&temp)
        .map_err(|e| StartFailure::Fatal(format!("cannot create {}: {e}", display_path(&temp))))?;
    let port = match port.map_or_else(free_port, Ok) {
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

/// Fails, naming the port, if something listens on `port` of 127.0.0.1.
fn check_free(port: u16) -> Result<(), HarnessError> {
    match TcpListener::bind((Ipv4Addr::LOCALHOST, port)) {
        Ok(_) => Ok(()),
        Err(e) => Err(HarnessError::other(format!(
            "seqid-harness: port {port} of 127.0.0.1 is not free ({e}): another server may \
             listen there; stop it, or ask for another port (0 for any free one)"
        ))),
    }
}

fn free_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}
