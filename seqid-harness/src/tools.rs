//! Other tools that keep auto-increment counters in MongoDB, for the tests that
//! share counters with them (issue 28): MongoEngine's `SequenceField` (Python),
//! mongoose-sequence, mongoose-auto-increment and @typegoose/auto-increment
//! (Node.js).
//!
//! Each tool is installed on first use, as the servers are, into the
//! user-level cache ([`cache_dir`](crate::cache_dir)), with every version
//! pinned:
//!
//! - MongoEngine with `python3 -m pip install --target` from
//!   `python/mongoengine-requirements.txt` (in this crate's source, compiled
//!   into it) into `mongoengine-0.29.3`;
//! - each Node.js tool with `npm ci` from `node/<setup>/` (`package.json` with
//!   exact versions and its `package-lock.json`, also compiled in and written
//!   into the staging directory) into
//!   `npm-<setup>-<plugin version>-mongoose-<mongoose version>`. The three are
//!   separate installs because they need different majors of mongoose.
//!
//! An install is built in a staging directory and renamed into place, so that
//! any number of test processes may ask for it at the same time. A tool runs
//! in a process of its own: [`Tool::command`] returns the command that runs a
//! script with it.
//!
//! If `python3` (with pip), `node` or `npm` is missing, too old, or the
//! install fails, [`Tool::install`] and [`Tool::command`] fail with a
//! [`HarnessError`] that says what is missing and what to install; the tests
//! panic with it, so they fail rather than skip.
//!
//! ```no_run
//! use seqid_harness::Tool;
//!
//! let output = Tool::MongooseSequence
//!     .command("tests/tools/mongoose_sequence.js")?
//!     .env("MONGODB_URI", seqid_harness::server_uri()?)
//!     .args(["my_database", "3"])
//!     .output()?;
//! assert!(output.status.success());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::install::{Install, InstallError, run_installer};
use crate::pip::PipPackage;
use crate::util::{display_path, path_arg};
use crate::{HarnessError, PYTHON};

/// The Node.js interpreter that runs the Node.js tools.
const NODE: &str = "node";
/// npm, which installs them.
const NPM: &str = "npm";

/// A tool beside seqid that keeps auto-increment counters in MongoDB, pinned
/// to exact versions (see [`packages`](Tool::packages)).
///
/// ```no_run
/// for tool in seqid_harness::Tool::ALL {
///     println!("{tool}: installed in {}", tool.install()?.display());
/// }
/// # Ok::<(), seqid_harness::HarnessError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Tool {
    /// MongoEngine 0.29.3's `SequenceField` (Python), with pymongo 4.20.1 and
    /// dnspython 2.9.2. Needs Python >= 3.11 with pip.
    MongoEngine,
    /// mongoose-sequence 6.0.1 with mongoose 8.24.10 (Node.js >= 16.20.1).
    MongooseSequence,
    /// mongoose-auto-increment 5.0.1 with mongoose 6.13.11, installed with
    /// `--legacy-peer-deps` (the plugin's peer dependency says mongoose 4; it
    /// uses callbacks, which mongoose 7 dropped) and without the optional
    /// dependencies (the MongoDB driver's AWS authentication).
    MongooseAutoIncrement,
    /// @typegoose/auto-increment 5.0.1 with mongoose 9.12.1 (Node.js >=
    /// 20.19), without typegoose itself.
    TypegooseAutoIncrement,
}

impl Tool {
    /// Every tool.
    pub const ALL: [Tool; 4] = [
        Tool::MongoEngine,
        Tool::MongooseSequence,
        Tool::MongooseAutoIncrement,
        Tool::TypegooseAutoIncrement,
    ];

    /// The top-level packages installed, with their exact versions: the tool
    /// first, then its MongoDB library.
    ///
    /// ```
    /// use seqid_harness::Tool;
    ///
    /// assert_eq!(Tool::MongooseSequence.packages()[0], ("mongoose-sequence", "6.0.1"));
    /// assert_eq!(Tool::MongooseSequence.packages()[1], ("mongoose", "8.24.10"));
    /// ```
    pub fn packages(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Tool::MongoEngine => MONGOENGINE_PACKAGES,
            Tool::MongooseSequence => MONGOOSE_SEQUENCE.packages,
            Tool::MongooseAutoIncrement => MONGOOSE_AUTO_INCREMENT.packages,
            Tool::TypegooseAutoIncrement => TYPEGOOSE_AUTO_INCREMENT.packages,
        }
    }

    /// Where the tool is (or will be) installed, in
    /// [`cache_dir`](crate::cache_dir).
    ///
    /// ```
    /// let dir = seqid_harness::Tool::MongoEngine.install_dir();
    /// assert_eq!(dir, seqid_harness::cache_dir().join("mongoengine-0.29.3"));
    /// ```
    pub fn install_dir(self) -> PathBuf {
        match self.setup() {
            Setup::Pip(package) => package.install_dir(),
            Setup::Npm(setup) => setup.install().dest(),
        }
    }

    /// Installs the tool if it is not installed yet (once per version, safely
    /// when several processes ask at the same time) and returns its install
    /// directory. The first install downloads the packages (seconds to a
    /// minute); after that this only checks that the directory is there.
    ///
    /// Fails if the interpreter or the installer is missing or too old, or if
    /// the install fails; the error says what to install.
    ///
    /// ```no_run
    /// let dir = seqid_harness::Tool::TypegooseAutoIncrement.install()?;
    /// assert!(dir.join("node_modules/@typegoose/auto-increment").is_dir());
    /// # Ok::<(), seqid_harness::HarnessError>(())
    /// ```
    pub fn install(self) -> Result<PathBuf, HarnessError> {
        let installed = match self.setup() {
            Setup::Pip(package) => check_python().and_then(|()| package.try_install()),
            Setup::Npm(setup) => check_node(setup).and_then(|()| setup.try_install()),
        };
        installed.map_err(|e| self.error(e))
    }

    /// The command that runs `script` (a `.py` file for MongoEngine, a
    /// CommonJS `.js` file for the others) with the tool, installing it first
    /// if needed (see [`install`](Tool::install)). Add the script's arguments
    /// and environment (e.g. `MONGODB_URI`) to it and run it.
    ///
    /// - MongoEngine: `python3 -s -c <launcher> <install dir> <script>`, which
    ///   runs the script as `python3 <script>` would, with the install
    ///   directory first on `sys.path` (and the user's site-packages off).
    /// - Node.js tools: `node <script>` with `NODE_PATH` set to the install's
    ///   `node_modules`, so that `require('mongoose')` finds the pinned one.
    ///
    /// ```no_run
    /// use seqid_harness::Tool;
    ///
    /// let status = Tool::MongoEngine
    ///     .command("tests/tools/mongoengine_users.py")?
    ///     .env("MONGODB_URI", seqid_harness::server_uri()?)
    ///     .args(["my_database", "3"])
    ///     .status()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn command(self, script: impl AsRef<Path>) -> Result<Command, HarnessError> {
        let dir = self.install()?;
        let script = path_arg(script.as_ref());
        Ok(match self.setup() {
            Setup::Pip(package) => {
                let line = package.command(&dir, vec![script]);
                let mut command = Command::new(&line[0]);
                command.args(&line[1..]);
                command
            }
            Setup::Npm(_) => {
                let mut command = Command::new(NODE);
                command
                    .arg(script)
                    .env("NODE_PATH", dir.join("node_modules"));
                command
            }
        })
    }

    fn setup(self) -> Setup {
        match self {
            Tool::MongoEngine => Setup::Pip(&MONGOENGINE),
            Tool::MongooseSequence => Setup::Npm(&MONGOOSE_SEQUENCE),
            Tool::MongooseAutoIncrement => Setup::Npm(&MONGOOSE_AUTO_INCREMENT),
            Tool::TypegooseAutoIncrement => Setup::Npm(&TYPEGOOSE_AUTO_INCREMENT),
        }
    }

    /// The error for a failed install or check, with what to do about it.
    fn error(self, e: InstallError) -> HarnessError {
        let remedy = match self.setup() {
            Setup::Pip(package) => format!(
                "Install Python >= {}.{} with pip, so that `{PYTHON} -m pip --version` works, with access \
                 to PyPI (or your pip index). seqid-harness then installs {self} into {} with \
                 `{PYTHON} -m pip install --target DIR -r` its pinned requirements \
                 (seqid-harness/python/mongoengine-requirements.txt).",
                MIN_PYTHON.0,
                MIN_PYTHON.1,
                display_path(&package.install_dir()),
            ),
            Setup::Npm(setup) => format!(
                "Install Node.js >= {} with npm >= {} on PATH, so that `{NODE} --version` and \
                 `{NPM} --version` work, with access to the npm registry. seqid-harness then \
                 installs {self} into {} with `{}` from its pinned package.json and \
                 package-lock.json (seqid-harness/node/{}/).",
                version_text(setup.min_node),
                MIN_NPM_MAJOR,
                display_path(&setup.install().dest()),
                setup.npm_ci().join(" "),
                setup.setup,
            ),
        };
        HarnessError::no_tool(&self.to_string(), &e.problem, &remedy, &e.details)
    }
}

impl std::fmt::Display for Tool {
    /// The packages and their versions, e.g. `mongoose-sequence 6.0.1 with
    /// mongoose 8.24.10`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (tool, version) = self.packages()[0];
        write!(f, "{tool} {version}")?;
        if let Some((lib, version)) = self.packages().get(1) {
            write!(f, " with {lib} {version}")?;
        }
        Ok(())
    }
}

enum Setup {
    Pip(&'static PipPackage),
    Npm(&'static NpmSetup),
}

// ---------------------------------------------------------------------------
// MongoEngine, with pip

/// The oldest Python that the pinned pymongo and dnspython support.
const MIN_PYTHON: (u32, u32) = (3, 11);

/// Keep in step with `python/mongoengine-requirements.txt`.
const MONGOENGINE_PACKAGES: &[(&str, &str)] = &[
    ("mongoengine", "0.29.3"),
    ("pymongo", "4.20.1"),
    ("dnspython", "2.9.2"),
];

static MONGOENGINE: PipPackage = PipPackage {
    name: "mongoengine",
    version: MONGOENGINE_PACKAGES[0].1,
    requirements: include_str!("../python/mongoengine-requirements.txt"),
    marker: "mongoengine/fields.py",
    launcher: include_str!("../python/script_launcher.py"),
};

/// Checks, once per process, that `python3` is there and recent enough.
fn check_python() -> Result<(), InstallError> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    CHECKED
        .get_or_init(|| {
            let version = version_of(
                PYTHON,
                &["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            )?;
            if (version.0, version.1) < MIN_PYTHON {
                return Err(format!(
                    "`{PYTHON}` is Python {}, older than {}.{}",
                    version_text(version),
                    MIN_PYTHON.0,
                    MIN_PYTHON.1
                ));
            }
            Ok(())
        })
        .clone()
        .map_err(InstallError::new)?;
    // pip is only needed to install.
    if MONGOENGINE.install_dir().join(MONGOENGINE.marker).is_file() {
        return Ok(());
    }
    version_of(PYTHON, &["-m", "pip", "--version"])
        .map(drop)
        .map_err(|e| InstallError::new(format!("pip is missing: {e}")))
}

// ---------------------------------------------------------------------------
// The Node.js tools, with npm

/// The oldest npm whose `npm ci` reads lockfile version 3.
const MIN_NPM_MAJOR: u32 = 7;

/// One `npm ci` install: a `package.json` with exact versions and its
/// `package-lock.json`, both in this crate's `node/<setup>/` and compiled in.
struct NpmSetup {
    /// The directory's name under this crate's `node/`.
    setup: &'static str,
    /// The top-level packages (the plugin first, then mongoose), as pinned in
    /// `package.json`.
    packages: &'static [(&'static str, &'static str)],
    package_json: &'static str,
    package_lock: &'static str,
    /// Options of `npm ci` besides the usual ones.
    npm_args: &'static [&'static str],
    /// The oldest Node.js that every package of the lockfile supports.
    min_node: (u32, u32, u32),
    /// The plugin's `package.json`, there once `npm ci` is done.
    marker: &'static str,
}

static MONGOOSE_SEQUENCE: NpmSetup = NpmSetup {
    setup: "mongoose-sequence",
    packages: &[("mongoose-sequence", "6.0.1"), ("mongoose", "8.24.10")],
    package_json: include_str!("../node/mongoose-sequence/package.json"),
    package_lock: include_str!("../node/mongoose-sequence/package-lock.json"),
    npm_args: &[],
    min_node: (16, 20, 1),
    marker: "node_modules/mongoose-sequence/package.json",
};

static MONGOOSE_AUTO_INCREMENT: NpmSetup = NpmSetup {
    setup: "mongoose-auto-increment",
    packages: &[
        ("mongoose-auto-increment", "5.0.1"),
        ("mongoose", "6.13.11"),
    ],
    package_json: include_str!("../node/mongoose-auto-increment/package.json"),
    package_lock: include_str!("../node/mongoose-auto-increment/package-lock.json"),
    // The plugin's peer dependency is mongoose ^4.1.12, which mongoose 6
    // contradicts; the optional dependencies are the driver's AWS
    // authentication (32 packages), which nothing here uses.
    npm_args: &["--legacy-peer-deps", "--omit=optional"],
    min_node: (12, 9, 0),
    marker: "node_modules/mongoose-auto-increment/package.json",
};

static TYPEGOOSE_AUTO_INCREMENT: NpmSetup = NpmSetup {
    setup: "typegoose-auto-increment",
    packages: &[
        ("@typegoose/auto-increment", "5.0.1"),
        ("mongoose", "9.12.1"),
    ],
    package_json: include_str!("../node/typegoose-auto-increment/package.json"),
    package_lock: include_str!("../node/typegoose-auto-increment/package-lock.json"),
    npm_args: &[],
    min_node: (20, 19, 0),
    marker: "node_modules/@typegoose/auto-increment/package.json",
};

impl NpmSetup {
    fn install(&self) -> Install {
        let (plugin, plugin_version) = self.packages[0];
        let (_, mongoose_version) = self.packages[1];
        Install {
            what: format!("{plugin} {plugin_version} with mongoose {mongoose_version}"),
            dir_name: format!(
                "npm-{}-{plugin_version}-mongoose-{mongoose_version}",
                self.setup
            ),
            marker: self.marker,
        }
    }

    /// The command line that installs the setup from its two files.
    fn npm_ci(&self) -> Vec<&'static str> {
        let mut line = vec![NPM, "ci", "--no-audit", "--no-fund", "--ignore-scripts"];
        line.extend(self.npm_args);
        line
    }

    /// `npm ci` in a staging directory that holds the two files, which is
    /// then renamed into place whole.
    fn try_install(&self) -> Result<PathBuf, InstallError> {
        self.install().ensure(|staging| {
            for (name, text) in [
                ("package.json", self.package_json),
                ("package-lock.json", self.package_lock),
            ] {
                fs::write(staging.join(name), text).map_err(|e| {
                    InstallError::new(format!("cannot write {}: {e}", staging.display()))
                })?;
            }
            let line = self.npm_ci();
            run_installer(
                Command::new(line[0])
                    .args(&line[1..])
                    .current_dir(staging)
                    .env("npm_config_update_notifier", "false"),
                &line.join(" "),
            )?;
            Ok(staging.to_owned())
        })
    }
}

/// Checks, once per process and setup, that `node` is there and recent
/// enough for `setup`, and (to install) that `npm` is there.
fn check_node(setup: &NpmSetup) -> Result<(), InstallError> {
    static NODE_VERSION: OnceLock<Result<(u32, u32, u32), String>> = OnceLock::new();
    let version = NODE_VERSION
        .get_or_init(|| version_of(NODE, &["--version"]))
        .clone()
        .map_err(InstallError::new)?;
    if version < setup.min_node {
        return Err(InstallError::new(format!(
            "`{NODE}` is Node.js {}, older than {}, which {} needs",
            version_text(version),
            version_text(setup.min_node),
            setup.install().what
        )));
    }
    if setup.install().is_installed_in(&setup.install().dest()) {
        return Ok(());
    }
    static NPM_VERSION: OnceLock<Result<(u32, u32, u32), String>> = OnceLock::new();
    let npm = NPM_VERSION
        .get_or_init(|| version_of(NPM, &["--version"]))
        .clone()
        .map_err(InstallError::new)?;
    if npm.0 < MIN_NPM_MAJOR {
        return Err(InstallError::new(format!(
            "`{NPM}` is npm {}, older than {MIN_NPM_MAJOR}, whose `npm ci` reads these lockfiles",
            version_text(npm)
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Helpers

/// Runs `program args` and reads a version `x.y.z` (or `vx.y.z`) from the
/// first line it prints; an error says the program is missing or broken.
fn version_of(program: &str, args: &[&str]) -> Result<(u32, u32, u32), String> {
    let shown = format!("{program} {}", args.join(" "));
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!("`{program}` was not found on PATH")
            } else {
                format!("cannot run `{shown}`: {e}")
            }
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "`{shown}` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    parse_version(&text).ok_or_else(|| format!("`{shown}` printed no version: {text:?}"))
}

/// The first `x.y.z` (or `x.y`) in `text`, after an optional `v` or a word
/// such as `pip`.
fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let word = text
        .split_whitespace()
        .map(|w| w.trim_start_matches('v'))
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))?;
    let mut parts = word.split('.').map(|p| {
        p.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse::<u32>()
            .ok()
    });
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

fn version_text((major, minor, patch): (u32, u32, u32)) -> String {
    format!("{major}.{minor}.{patch}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_parsed() {
        assert_eq!(parse_version("v20.20.2\n"), Some((20, 20, 2)));
        assert_eq!(parse_version("11.19.1"), Some((11, 19, 1)));
        assert_eq!(parse_version("3.11.7"), Some((3, 11, 7)));
        assert_eq!(
            parse_version("pip 23.2.1 from /x/pip (python 3.11)"),
            Some((23, 2, 1))
        );
        assert_eq!(parse_version("nothing"), None);
    }

    #[test]
    fn a_missing_program_is_named() {
        let e = version_of("seqid-harness-no-such-program", &["--version"]).unwrap_err();
        assert_eq!(e, "`seqid-harness-no-such-program` was not found on PATH");
    }

    /// A failure names the tool, the problem and what to install.
    #[test]
    fn errors_say_what_to_install() {
        let e = Tool::TypegooseAutoIncrement
            .error(InstallError::new("`node` was not found on PATH"))
            .to_string();
        for part in [
            "@typegoose/auto-increment 5.0.1 with mongoose 9.12.1",
            "`node` was not found on PATH",
            "Install Node.js >= 20.19.0 with npm >= 7",
            "npm-typegoose-auto-increment-5.0.1-mongoose-9.12.1",
        ] {
            assert!(e.contains(part), "{part:?} in {e}");
        }
        let e = Tool::MongoEngine
            .error(InstallError::new("`python3` was not found on PATH"))
            .to_string();
        for part in [
            "mongoengine 0.29.3",
            "`python3` was not found on PATH",
            "Install Python >= 3.11 with pip",
            "mongoengine-0.29.3",
        ] {
            assert!(e.contains(part), "{part:?} in {e}");
        }
    }

    /// The pins of `packages()` are those of the files installed from, so
    /// that the install directory's name (made from them) changes with them.
    #[test]
    fn the_pins_are_those_of_the_files() {
        for (name, version) in MONGOENGINE_PACKAGES {
            let pin = format!("\n{name}=={version}\n");
            assert!(MONGOENGINE.requirements.contains(&pin), "{pin:?}");
        }
        for setup in [
            &MONGOOSE_SEQUENCE,
            &MONGOOSE_AUTO_INCREMENT,
            &TYPEGOOSE_AUTO_INCREMENT,
        ] {
            for (name, version) in setup.packages {
                let pin = format!("\"{name}\": \"{version}\"");
                assert!(setup.package_json.contains(&pin), "{}: {pin}", setup.setup);
                let locked =
                    format!("\"node_modules/{name}\": {{\n      \"version\": \"{version}\"");
                assert!(
                    setup.package_lock.contains(&locked),
                    "{}: {locked}",
                    setup.setup
                );
            }
            assert!(
                !setup.package_lock.contains("\"resolved\""),
                "{}: the lockfile names no download address",
                setup.setup
            );
            assert!(
                setup.install().marker.starts_with("node_modules/"),
                "{}",
                setup.setup
            );
        }
    }
}
