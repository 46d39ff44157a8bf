//! Installing a Python package (the servers SecantusDB and nx-27017, the tool
//! MongoEngine) with pip into the user-level cache
//! ([`cache_dir`](crate::cache_dir)), once, safely when several processes do
//! it at the same time (see [`Install`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::install::{Install, InstallError, run_installer};
use crate::util::path_arg;
use crate::{HarnessError, PYTHON};

/// A PyPI package pinned, with its whole dependency tree, in a requirements
/// file, and installed with `pip install --target` into
/// `<cache_dir>/<name>-<version>`.
pub(crate) struct PipPackage {
    /// The PyPI name, e.g. `"nx-27017"`.
    pub(crate) name: &'static str,
    /// The pinned version, part of the install directory's name.
    pub(crate) version: &'static str,
    /// The requirements file's text, handed to `pip install -r`.
    pub(crate) requirements: &'static str,
    /// A file, relative to the install directory, that exists once the
    /// package is installed.
    pub(crate) marker: &'static str,
    /// Python source that puts its first argument (the install directory) on
    /// `sys.path` and runs the package with the remaining arguments.
    pub(crate) launcher: &'static str,
}

impl PipPackage {
    fn install(&self) -> Install {
        Install {
            what: format!("{} {}", self.name, self.version),
            dir_name: format!("{}-{}", self.name, self.version),
            marker: self.marker,
        }
    }

    /// `<cache_dir>/<name>-<version>`.
    pub(crate) fn install_dir(&self) -> PathBuf {
        self.install().dest()
    }

    /// The command that installs the package, for messages.
    pub(crate) fn pip_install(&self) -> String {
        format!("{PYTHON} -m pip install {}=={}", self.name, self.version)
    }

    /// The command line that runs the launcher with the package installed in
    /// `install` and `args`.
    pub(crate) fn command(&self, install: &Path, args: Vec<String>) -> Vec<String> {
        let mut command = vec![
            PYTHON.into(),
            "-s".into(),
            "-c".into(),
            self.launcher.into(),
            path_arg(install),
        ];
        command.extend(args);
        command
    }

    /// Installs the package (see [`try_install`](Self::try_install)) for a
    /// server: a failure says how to get a server some other way.
    pub(crate) fn ensure_installed(&self) -> Result<PathBuf, HarnessError> {
        self.try_install()
            .map_err(|e| HarnessError::no_server(e.problem, &e.details))
    }

    /// Installs the package with pip into a staging directory and renames that
    /// into place, so that concurrent processes never see a half-installed
    /// directory. Returns the install directory.
    pub(crate) fn try_install(&self) -> Result<PathBuf, InstallError> {
        self.install().ensure(|staging| {
            let site = staging.join("site");
            let requirements = staging.join("requirements.txt");
            std::fs::write(&requirements, self.requirements).map_err(|e| {
                InstallError::new(format!("cannot write {}: {e}", requirements.display()))
            })?;
            run_installer(
                Command::new(PYTHON)
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--disable-pip-version-check",
                        "--no-input",
                    ])
                    .arg("--target")
                    .arg(&site)
                    .arg("-r")
                    .arg(&requirements)
                    // Settings that contradict --target would make pip refuse.
                    .env("PIP_USER", "0")
                    .env("PIP_REQUIRE_VIRTUALENV", "0"),
                &self.pip_install(),
            )?;
            Ok(site)
        })
    }
}
