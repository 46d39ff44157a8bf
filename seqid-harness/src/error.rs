//! [`HarnessError`]: no server could be had, or reached, or a tool installed.

use std::fmt;

use crate::util::display_path;
use crate::{nx, secantus};

/// No MongoDB-compatible server could be had (or reached), or another tool
/// that the tests run (see [`Tool`](crate::Tool)) could not be installed.
///
/// Its [`Display`](fmt::Display) text says what went wrong, what to do about
/// it, and ends with the relevant tail of the server log or the installer's
/// output.
///
/// ```no_run
/// match seqid_harness::server_uri() {
///     Ok(uri) => println!("using {uri}"),
///     Err(e) => eprintln!("{e}"),
/// }
/// ```
#[derive(Clone, Debug)]
pub struct HarnessError {
    message: String,
}

impl HarnessError {
    /// An error about getting a server at all, with the ways out.
    pub(crate) fn no_server(problem: impl fmt::Display, details: &str) -> Self {
        let mut message = format!(
            "seqid-harness: no MongoDB-compatible server could be had: {problem}\n\
             Do one of these:\n\
             \x20 - set MONGODB_URI=mongodb://host:port to use your own MongoDB (databases are created and dropped there);\n\
             \x20 - or put `mongod` on PATH (it is started on a free 127.0.0.1 port with a temporary --dbpath);\n\
             \x20 - or make `{}` work (Python >= 3.10 with pip, and access to PyPI or your pip index), \
             so that the default embedded server, SecantusDB, can be installed into {};\n\
             \x20 - or set SEQID_TEST_SERVER=nx and make `{}` work (Python >= 3.11), so that nx-27017 \
             can be installed into {} instead.\n",
            secantus::PACKAGE.pip_install(),
            display_path(&secantus::PACKAGE.install_dir()),
            nx::PACKAGE.pip_install(),
            display_path(&nx::PACKAGE.install_dir()),
        );
        let details = details.trim();
        if !details.is_empty() {
            message.push_str(details);
            message.push('\n');
        }
        HarnessError { message }
    }

    /// An error about installing or running another tool (issue 28), with
    /// what is missing and what to install.
    pub(crate) fn no_tool(tool: &str, problem: &str, remedy: &str, details: &str) -> Self {
        let mut message = format!(
            "seqid-harness: cannot install or run {tool}, which the tests that share counters with it \
             run in processes of their own: {problem}\n{remedy}\n"
        );
        let details = details.trim();
        if !details.is_empty() {
            message.push_str(details);
            message.push('\n');
        }
        HarnessError { message }
    }

    /// Any other failure (e.g. a driver error after the server was found).
    pub(crate) fn other(message: impl Into<String>) -> Self {
        HarnessError {
            message: message.into(),
        }
    }
}

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message.trim_end())
    }
}

impl std::error::Error for HarnessError {}
