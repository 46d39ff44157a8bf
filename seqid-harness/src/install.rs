//! Installing something (a pip package, an npm setup) into the user-level
//! cache ([`cache_dir`]) once, safely when several processes do it at the same
//! time: it is built in a staging directory of its own and renamed into place,
//! so that nobody ever sees a half-installed directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{display_path, nanos, tail_str};

/// Why an install failed: the problem in one line, and details (e.g. the tail
/// of the installer's output). Each caller turns it into the
/// [`HarnessError`](crate::HarnessError) that says what to do about it.
#[derive(Debug)]
pub(crate) struct InstallError {
    pub(crate) problem: String,
    pub(crate) details: String,
}

impl InstallError {
    pub(crate) fn new(problem: impl Into<String>) -> Self {
        InstallError {
            problem: problem.into(),
            details: String::new(),
        }
    }
}

/// The directory that everything seqid-harness installs goes to (the servers
/// SecantusDB and nx-27017, and the [`Tool`](crate::Tool)s), one directory
/// per package and pinned version, shared by every clone of seqid and every
/// program that uses the harness:
///
/// 1. `SEQID_HARNESS_CACHE`, when set and not empty (a relative path is taken
///    from the current directory);
/// 2. else the user's cache directory + `/seqid-harness`: `$XDG_CACHE_HOME`
///    (when absolute), else `$HOME/.cache`, on Linux and other Unixes;
///    `$HOME/Library/Caches` on macOS; `%LOCALAPPDATA%` on Windows;
/// 3. else [`std::env::temp_dir()`] + `/seqid-harness`.
///
/// Nothing is written into the source tree or the workspace's `target/`, so a
/// read-only clone, or a `seqid-server` installed with `cargo install`, works
/// as well. Delete the directory to uninstall; it is filled again on first use.
///
/// ```no_run
/// println!("servers and tools are installed in {}", seqid_harness::cache_dir().display());
/// ```
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SEQID_HARNESS_CACHE").filter(|dir| !dir.is_empty()) {
        let dir = PathBuf::from(dir);
        return std::path::absolute(&dir).unwrap_or(dir);
    }
    user_cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("seqid-harness")
}

/// The user's cache directory, as the `dirs` crate's `cache_dir` finds it.
#[cfg(all(unix, not(target_os = "macos")))]
fn user_cache_dir() -> Option<PathBuf> {
    absolute_env("XDG_CACHE_HOME").or_else(|| Some(absolute_env("HOME")?.join(".cache")))
}

/// The user's cache directory, as the `dirs` crate's `cache_dir` finds it.
#[cfg(target_os = "macos")]
fn user_cache_dir() -> Option<PathBuf> {
    Some(absolute_env("HOME")?.join("Library").join("Caches"))
}

/// The user's cache directory, as the `dirs` crate's `cache_dir` finds it.
#[cfg(windows)]
fn user_cache_dir() -> Option<PathBuf> {
    absolute_env("LOCALAPPDATA")
}

/// The user's cache directory: none known on this platform.
#[cfg(not(any(unix, windows)))]
fn user_cache_dir() -> Option<PathBuf> {
    None
}

/// The environment variable `name`, if it holds an absolute path (the XDG
/// base directory specification says to ignore a relative one).
fn absolute_env(name: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os(name)?);
    dir.is_absolute().then_some(dir)
}

/// Something installed into `<cache_dir>/<dir_name>`.
pub(crate) struct Install {
    /// What is installed, for messages, e.g. `"nx-27017 0.8.1"`.
    pub(crate) what: String,
    /// The install directory's name.
    pub(crate) dir_name: String,
    /// A file, relative to the install directory, that exists once it is
    /// installed.
    pub(crate) marker: &'static str,
}

impl Install {
    /// `<cache_dir>/<dir_name>`.
    pub(crate) fn dest(&self) -> PathBuf {
        cache_dir().join(&self.dir_name)
    }

    /// Whether `dir` holds a complete install.
    pub(crate) fn is_installed_in(&self, dir: &Path) -> bool {
        dir.join(self.marker).is_file()
    }

    /// Returns the install directory, installing first if needed:
    /// `populate` is handed a fresh staging directory (in the same parent
    /// directory, so that a rename is atomic) and returns the directory, in
    /// or equal to it, that becomes the install directory. If another process
    /// installed meanwhile, its directory is used and ours is removed.
    pub(crate) fn ensure(
        &self,
        populate: impl FnOnce(&Path) -> Result<PathBuf, InstallError>,
    ) -> Result<PathBuf, InstallError> {
        let dest = self.dest();
        if self.is_installed_in(&dest) {
            return Ok(dest);
        }
        let parent = dest.parent().expect("install dir has a parent");
        fs::create_dir_all(parent).map_err(|e| {
            InstallError::new(format!(
                "cannot create {}: {e} (set SEQID_HARNESS_CACHE to a writable directory)",
                display_path(parent)
            ))
        })?;
        let staging = parent.join(format!(
            ".staging-{}-{}-{}",
            self.dir_name,
            std::process::id(),
            nanos()
        ));
        fs::create_dir_all(&staging).map_err(|e| {
            InstallError::new(format!("cannot create {}: {e}", display_path(&staging)))
        })?;
        eprintln!(
            "seqid-harness: installing {} into {} (first use)",
            self.what,
            display_path(&dest)
        );
        let populated = populate(&staging).and_then(|built| {
            if self.is_installed_in(&built) {
                Ok(built)
            } else {
                Err(InstallError::new(format!(
                    "the install of {} finished but {} is missing",
                    self.what, self.marker
                )))
            }
        });
        let built = match populated {
            Ok(built) => built,
            Err(e) => {
                let _ = fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let renamed = fs::rename(&built, &dest);
        let _ = fs::remove_dir_all(&staging);
        match renamed {
            Ok(()) => Ok(dest),
            // Another process won the race: use its directory.
            Err(_) if self.is_installed_in(&dest) => Ok(dest),
            Err(e) => Err(InstallError::new(format!(
                "cannot move the {} install into {}: {e}",
                self.what,
                display_path(&dest)
            ))),
        }
    }
}

/// Runs an installer (pip, npm) to its end with no standard input, its output
/// captured. `shown` is the command as a message shows it. On failure, the
/// error's details are the tail of the installer's output.
pub(crate) fn run_installer(command: &mut Command, shown: &str) -> Result<(), InstallError> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| InstallError::new(format!("cannot run `{shown}`: {e}")))?;
    if output.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    Err(InstallError {
        problem: format!("`{shown}` failed ({})", output.status),
        details: format!(
            "--- end of the installer's output ---\n{}",
            tail_str(&text, 4000)
        ),
    })
}
