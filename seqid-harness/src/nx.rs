//! nx-27017, the fallback server (step 3): installing it with pip into the
//! build directory, and the command line that starts it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{display_path, nanos, path_arg, tail_str};
use crate::{HarnessError, PYTHON};

/// The nx-27017 version installed and started by the fallback (step 3).
///
/// ```no_run
/// println!("fallback server: nx-27017 {}", seqid_harness::NX_VERSION);
/// ```
pub const NX_VERSION: &str = "0.8.1";

/// Exact pins of nx-27017 and its dependencies, handed to `pip install -r`.
const NX_REQUIREMENTS: &str = include_str!("../python/nx-27017-requirements.txt");
/// Runs nx-27017's `main` from the project-local install directory.
const NX_LAUNCHER_PY: &str = include_str!("../python/nx_launcher.py");

/// The files in the temporary directory whose tails are shown on failure.
pub(crate) const LOG_FILES: &[&str] = &["console.log", "nx-27017.log"];

/// The command (run by the watchdog) that starts nx-27017 from `install` on
/// `port`, with in-memory databases and its pid and log files in `temp`.
pub(crate) fn command(install: &Path, port: u16, temp: &Path) -> Vec<String> {
    vec![
        PYTHON.into(),
        "-s".into(),
        "-c".into(),
        NX_LAUNCHER_PY.into(),
        path_arg(install),
        "--data-dir".into(),
        "memory".into(),
        "-p".into(),
        port.to_string(),
        "--pid-file".into(),
        path_arg(&temp.join("nx-27017.pid")),
        "--log-file".into(),
        path_arg(&temp.join("nx-27017.log")),
    ]
}

/// How a started nx-27017 is described by [`server_kind`](crate::server_kind).
pub(crate) fn describe(port: u16) -> String {
    format!("nx-27017 {NX_VERSION} on 127.0.0.1:{port}")
}

/// `<workspace>/target/seqid-harness/nx-27017-<version>`.
pub(crate) fn install_dir() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("target")
        .join("seqid-harness")
        .join(format!("nx-27017-{NX_VERSION}"))
}

fn is_installed(dir: &Path) -> bool {
    dir.join("nx_27017").join("__init__.py").is_file()
}

/// Installs nx-27017 with pip into a staging directory and renames that into
/// place, so that concurrent processes never see a half-installed directory.
pub(crate) fn ensure_installed() -> Result<PathBuf, HarnessError> {
    let dest = install_dir();
    if is_installed(&dest) {
        return Ok(dest);
    }
    let fail = |problem: String, details: &str| HarnessError::no_server(problem, details);
    let parent = dest.parent().expect("install dir has a parent");
    fs::create_dir_all(parent)
        .map_err(|e| fail(format!("cannot create {}: {e}", display_path(parent)), ""))?;
    let staging = parent.join(format!(
        ".staging-nx-27017-{NX_VERSION}-{}-{}",
        std::process::id(),
        nanos()
    ));
    let site = staging.join("site");
    let requirements = staging.join("requirements.txt");
    fs::create_dir_all(&staging)
        .and_then(|()| fs::write(&requirements, NX_REQUIREMENTS))
        .map_err(|e| fail(format!("cannot write {}: {e}", display_path(&staging)), ""))?;

    eprintln!(
        "seqid-harness: installing nx-27017 {NX_VERSION} into {} (first use)",
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
                format!("cannot run `{PYTHON} -m pip` to install nx-27017: {e}"),
                "",
            ));
        }
    };
    if !output.status.success() || !is_installed(&site) {
        let _ = fs::remove_dir_all(&staging);
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        return Err(fail(
            format!(
                "`{PYTHON} -m pip install nx-27017=={NX_VERSION}` failed ({})",
                output.status
            ),
            &format!("--- end of pip output ---\n{}", tail_str(&text, 4000)),
        ));
    }
    let renamed = fs::rename(&site, &dest);
    let _ = fs::remove_dir_all(&staging);
    match renamed {
        Ok(()) => Ok(dest),
        // Another process won the race: use its directory.
        Err(_) if is_installed(&dest) => Ok(dest),
        Err(e) => Err(fail(
            format!(
                "cannot move the nx-27017 install into {}: {e}",
                display_path(&dest)
            ),
            "",
        )),
    }
}
