//! Installing a Python server (SecantusDB, nx-27017) with pip into the build
//! directory, once, safely when several processes do it at the same time.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{display_path, nanos, path_arg, tail_str};
use crate::{HarnessError, PYTHON};

/// A PyPI package pinned, with its whole dependency tree, in a requirements
/// file, and installed with `pip install --target` into
/// `<workspace>/target/seqid-harness/<name>-<version>`.
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
    /// `sys.path` and runs the server with the remaining arguments.
    pub(crate) launcher: &'static str,
}

impl PipPackage {
    /// `<workspace>/target/seqid-harness/<name>-<version>`.
    pub(crate) fn install_dir(&self) -> PathBuf {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .join("target")
            .join("seqid-harness")
            .join(format!("{}-{}", self.name, self.version))
    }

    /// The command that installs the package, for messages.
    pub(crate) fn pip_install(&self) -> String {
        format!("{PYTHON} -m pip install {}=={}", self.name, self.version)
    }

    /// The command line that runs the server installed in `install` with
    /// `args`.
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

    fn is_installed(&self, dir: &Path) -> bool {
        dir.join(self.marker).is_file()
    }

    /// Installs the package with pip into a staging directory and renames that
    /// into place, so that concurrent processes never see a half-installed
    /// directory. Returns the install directory.
    pub(crate) fn ensure_installed(&self) -> Result<PathBuf, HarnessError> {
        let dest = self.install_dir();
        if self.is_installed(&dest) {
            return Ok(dest);
        }
        let fail = |problem: String, details: &str| HarnessError::no_server(problem, details);
        let parent = dest.parent().expect("install dir has a parent");
        fs::create_dir_all(parent)
            .map_err(|e| fail(format!("cannot create {}: {e}", display_path(parent)), ""))?;
        let staging = parent.join(format!(
            ".staging-{}-{}-{}-{}",
            self.name,
            self.version,
            std::process::id(),
            nanos()
        ));
        let site = staging.join("site");
        let requirements = staging.join("requirements.txt");
        fs::create_dir_all(&staging)
            .and_then(|()| fs::write(&requirements, self.requirements))
            .map_err(|e| fail(format!("cannot write {}: {e}", display_path(&staging)), ""))?;

        eprintln!(
            "seqid-harness: installing {} {} into {} (first use)",
            self.name,
            self.version,
            display_path(&dest)
        );
        let output = Command::new(PYTHON)
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
            .env("PIP_REQUIRE_VIRTUALENV", "0")
            .stdin(Stdio::null())
            .output();
        let output = match output {
            Ok(output) => output,
            Err(e) => {
                let _ = fs::remove_dir_all(&staging);
                return Err(fail(
                    format!("cannot run `{PYTHON} -m pip` to install {}: {e}", self.name),
                    "",
                ));
            }
        };
        if !output.status.success() || !self.is_installed(&site) {
            let _ = fs::remove_dir_all(&staging);
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            return Err(fail(
                format!("`{}` failed ({})", self.pip_install(), output.status),
                &format!("--- end of pip output ---\n{}", tail_str(&text, 4000)),
            ));
        }
        let renamed = fs::rename(&site, &dest);
        let _ = fs::remove_dir_all(&staging);
        match renamed {
            Ok(()) => Ok(dest),
            // Another process won the race: use its directory.
            Err(_) if self.is_installed(&dest) => Ok(dest),
            Err(e) => Err(fail(
                format!(
                    "cannot move the {} install into {}: {e}",
                    self.name,
                    display_path(&dest)
                ),
                "",
            )),
        }
    }
}
