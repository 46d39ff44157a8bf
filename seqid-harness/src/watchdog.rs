//! The Python watchdog (`python/watchdog.py`) that runs a local server for
//! exactly as long as this process lives.
//!
//! The watchdog starts the server in a temporary directory and stops it, and
//! removes that directory, as soon as the pipe to its standard input is
//! closed, which the kernel does when this process dies, however it dies.
//! While the server starts, it reports through files in that directory. It
//! also kills and restarts the server on request (for [`RestartableServer`](crate::RestartableServer)),
//! answering on its standard output.

use std::fs;
use std::io::{self, BufRead, BufReader, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::PYTHON;

/// Starts a server and stops it when our end of its stdin pipe closes.
const WATCHDOG_PY: &str = include_str!("../python/watchdog.py");

/// A running watchdog. Its stdin is closed only by [`stop`](Watchdog::stop)
/// or when this process exits.
pub(crate) struct Watchdog {
    child: Child,
    stdin: ChildStdin,
    /// Answers to `kill` and `start`.
    stdout: BufReader<ChildStdout>,
    /// The server's temporary directory, owned by the watchdog from now on.
    temp: PathBuf,
}

impl Watchdog {
    /// Starts the watchdog, which starts `command` in `temp`. The caller
    /// still owns `temp` if this fails.
    pub(crate) fn spawn(temp: &Path, command: &[String]) -> Result<Watchdog, String> {
        let spawned = Command::new(PYTHON)
            .arg("-s")
            .arg("-c")
            .arg(WATCHDOG_PY)
            .arg(temp)
            .args(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let hint = if e.kind() == ErrorKind::NotFound {
                    format!(
                        " ({PYTHON} is not on PATH; it runs the watchdog that stops the server)"
                    )
                } else {
                    String::new()
                };
                return Err(format!("cannot run {PYTHON}: {e}{hint}"));
            }
        };
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        Ok(Watchdog {
            child,
            stdin,
            stdout,
            temp: temp.to_owned(),
        })
    }

    /// The server's exit status, once it has exited on its own.
    pub(crate) fn server_exit(&self) -> Option<String> {
        fs::read_to_string(self.temp.join("server-exit")).ok()
    }

    /// The pid of the server the watchdog started, once written.
    pub(crate) fn server_pid(&self) -> Option<i64> {
        fs::read_to_string(self.temp.join("server-pid"))
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
    }

    /// Whether the watchdog itself has exited.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Tells the watchdog that the server is up, so that it reports an
    /// unexpected exit from now on.
    pub(crate) fn ready(&mut self) {
        let _ = self
            .stdin
            .write_all(b"ready\n")
            .and_then(|()| self.stdin.flush());
    }

    /// The server's temporary directory (its working directory).
    pub(crate) fn temp(&self) -> &Path {
        &self.temp
    }

    /// Sends `request` (`kill` or `start`) and returns the watchdog's answer.
    pub(crate) fn request(&mut self, request: &str) -> Result<String, String> {
        let mut answer = String::new();
        writeln!(self.stdin, "{request}")
            .and_then(|()| self.stdin.flush())
            .and_then(|()| self.stdout.read_line(&mut answer))
            .map_err(|e| format!("cannot talk to the watchdog: {e}"))?;
        if answer.is_empty() {
            return Err("the watchdog has exited".into());
        }
        Ok(answer.trim().to_owned())
    }

    /// Stops the server (`SIGTERM`, then `SIGKILL` after the watchdog's 15 s of
    /// grace) and the watchdog (killing it after 20 s), and removes the
    /// temporary directory.
    pub(crate) fn stop(self) {
        let Watchdog {
            mut child,
            stdin,
            temp,
            ..
        } = self;
        drop(stdin);
        wait_with_timeout(&mut child, Duration::from_secs(20));
        let _ = fs::remove_dir_all(&temp);
    }
}

fn wait_with_timeout(child: &mut Child, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}
