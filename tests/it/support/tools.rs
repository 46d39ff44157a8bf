//! The other tools that keep auto-increment counters (issue 28), run for real in processes
//! of their own: MongoEngine's `SequenceField`, mongoose-sequence, mongoose-auto-increment
//! and @typegoose/auto-increment, installed on first use by `seqid_harness::Tool` with
//! every version pinned, each with its script in `tests/tools/` (see `common.js` for what
//! every script does). Shared by `other_tools` (each tool alone) and `shared_counters`
//! (each tool beside seqid), with the per-server work-arounds both need.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use futures_util::TryStreamExt;
use mongodb::Database;
use mongodb::bson::Document as BsonDocument;
use seqid_harness::{ServerFlavor, Tool};

/// How long one process of a tool may take, once installed (a few seconds normally).
pub const PROCESS_TIME_LIMIT: Duration = Duration::from_secs(180);

/// The lines a tool's script printed, `<sequence> <id>`, grouped by sequence, in the
/// order printed.
pub type Printed = BTreeMap<String, Vec<i64>>;

/// `tests/tools/<name>`.
fn script(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tools")).join(name)
}

/// A tool's script in `tests/tools/`, as the tests run it: the tool that runs it, its
/// file, and what is added to each of its processes' environment. What varies from one
/// run to the next (the database, the documents each process saves, the processes) is
/// given to [`run`](Script::run) and [`start`](Script::start).
#[derive(Clone, Debug)]
pub struct Script {
    pub tool: Tool,
    pub file: &'static str,
    pub env: Vec<(&'static str, &'static str)>,
}

impl Script {
    /// Runs the script in one process per writer, all at once: each connects, says
    /// `ready`, and saves `n` documents per sequence once every one of them is ready.
    /// Returns what each printed; panics, with the process's standard error, if one
    /// fails.
    pub async fn run(&self, db: &Database, n: u32, writers: &[&str]) -> Vec<Printed> {
        let mut processes = self.start(db, n, writers).await;
        processes.go();
        processes.finish().await
    }

    /// Starts the script in one process per writer, as [`run`](Script::run) does, and
    /// returns once every process has said `ready` (or failed, which
    /// [`Processes::finish`] reports), so that the caller can start writers of its own at
    /// the moment it lets them go.
    pub async fn start(&self, db: &Database, n: u32, writers: &[&str]) -> Processes {
        let uri = seqid_harness::server_uri_for(db.name()).unwrap_or_else(|e| panic!("{e}"));
        let tool = self.tool;
        let script = script(self.file);
        let database = db.name().to_owned();
        let writers: Vec<String> = writers.iter().map(|w| (*w).to_owned()).collect();
        let env: Vec<(String, String)> = self
            .env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        tokio::task::spawn_blocking(move || {
            // Installs on first use; a missing python3, node or npm fails here.
            tool.command(&script).unwrap_or_else(|e| panic!("{e}"));
            // Every process is started before any is waited for, so that they connect at
            // the same time.
            let mut processes: Vec<Process> = writers
                .into_iter()
                .map(|writer| {
                    let mut command = tool.command(&script).unwrap_or_else(|e| panic!("{e}"));
                    command
                        .args([database.as_str(), &n.to_string(), &writer])
                        .env("MONGODB_URI", &uri)
                        .env("SEQID_WAIT_FOR_GO", "1")
                        .envs(env.iter().map(|(k, v)| (k, v)))
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped());
                    Process::spawn(tool, command, writer)
                })
                .collect();
            for process in &mut processes {
                process.wait_until_ready();
            }
            Processes(processes)
        })
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
    }
}

/// The processes of one [`Script::start`], each connected and waiting for its go.
pub struct Processes(Vec<Process>);

impl Processes {
    /// Lets every process save its documents. A process that did not say `ready` is let
    /// go too (its stdin closed), so that it fails in [`finish`](Processes::finish)
    /// instead of leaving the others waiting.
    pub fn go(&mut self) {
        for process in &mut self.0 {
            if let Some(mut stdin) = process.stdin.take() {
                // A process that has already failed cannot read it; `finish` says why.
                let _ = writeln!(stdin, "go");
            }
        }
    }

    /// Waits for every process to end (on a blocking thread) and returns what each
    /// printed; panics, with the process's standard error, if one failed.
    pub async fn finish(mut self) -> Vec<Printed> {
        self.go();
        tokio::task::spawn_blocking(move || self.0.into_iter().map(Process::finish).collect())
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
    }
}

/// One process of a tool's script, watched by a timer that kills it if it hangs.
struct Process {
    tool: Tool,
    writer: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The first line it printed: `ready`, or what it printed instead.
    ready: String,
    /// Its standard error, read to the end by a thread of its own.
    errors: JoinHandle<String>,
    /// Tells the timer that the process ended.
    done: mpsc::Sender<()>,
    /// Whether the timer had to kill the process.
    timer: JoinHandle<bool>,
}

impl Process {
    fn spawn(tool: Tool, mut command: Command, writer: String) -> Self {
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {tool} ({command:?}): {e}"));
        // A process that hangs (e.g. on a server that stopped answering) is killed, so
        // that the test fails with what it printed instead of waiting for the run's
        // time limit.
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        let (done, finished) = mpsc::channel::<()>();
        let timer = thread::spawn(move || {
            let timed_out = finished.recv_timeout(PROCESS_TIME_LIMIT).is_err();
            if timed_out {
                // SAFETY: kill(2) with a pid of ours: the child is not reaped before
                // `done` is sent (in `finish`), so the pid is still its own.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            timed_out
        });
        let mut stderr = child.stderr.take().unwrap();
        let errors = thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Process {
            tool,
            writer,
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            ready: String::new(),
            errors,
            done,
            timer,
        }
    }

    /// Reads the first line: `ready` once connected, or nothing if the process failed
    /// (or was killed) before that.
    fn wait_until_ready(&mut self) {
        let _ = self.stdout.read_line(&mut self.ready);
    }

    /// Waits for the process to end and returns what it printed after `ready`.
    fn finish(mut self) -> Printed {
        let (tool, writer, ready) = (self.tool, &self.writer, &self.ready);
        let mut out = String::new();
        let _ = self.stdout.read_to_string(&mut out);
        let _ = self.done.send(());
        let timed_out = self.timer.join().unwrap();
        let status = self.child.wait().unwrap();
        let errors = self.errors.join().unwrap();
        assert!(
            !timed_out,
            "{tool}, writer {writer}, killed after {PROCESS_TIME_LIMIT:?}; it printed:\n{ready}{out}\nand on stderr:\n{errors}"
        );
        assert!(
            status.success() && ready.trim() == "ready",
            "{tool}, writer {writer}, failed ({status}); it printed:\n{ready}{out}\nand on stderr:\n{errors}"
        );
        let mut printed = Printed::new();
        for line in out.lines() {
            let (sequence, id) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("{tool}, writer {writer}: unexpected line {line:?}"));
            let id = id
                .parse()
                .unwrap_or_else(|_| panic!("{tool}, writer {writer}: unexpected line {line:?}"));
            printed.entry(sequence.to_owned()).or_default().push(id);
        }
        printed
    }
}

/// The ids printed for `sequence`, by every process, each once (a duplicate fails).
pub fn ids_of(printed: &[Printed], sequence: &str) -> BTreeSet<i64> {
    let mut ids = BTreeSet::new();
    for id in printed
        .iter()
        .flat_map(|p| p.get(sequence).into_iter().flatten())
    {
        assert!(ids.insert(*id), "{sequence}: id {id} handed out twice");
    }
    ids
}

/// The field names of `d`, sorted.
pub fn keys(d: &BsonDocument) -> Vec<&str> {
    let mut keys: Vec<&str> = d.keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

/// Checks that `collection` has a unique index named `name` on `key`.
pub async fn assert_unique_index(db: &Database, collection: &str, name: &str, key: BsonDocument) {
    let indexes: Vec<_> = db
        .collection::<BsonDocument>(collection)
        .list_indexes()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let index = indexes
        .iter()
        .find(|i| i.keys == key)
        .unwrap_or_else(|| panic!("{collection}: no index on {key} in {indexes:?}"));
    let options = index.options.as_ref();
    assert_eq!(
        options.and_then(|o| o.unique),
        Some(true),
        "{collection}: the index on {key} is unique"
    );
    // nx-27017 0.8.1 ignores the name that createIndexes gives (the driver's default,
    // e.g. `id_1_reference_value_1`) and names the index itself,
    // `idx_<collection>_<field>_<field>...`.
    let name = if nx() {
        let fields: Vec<&str> = key.keys().map(String::as_str).collect();
        format!("idx_{collection}_{}", fields.join("_"))
    } else {
        name.to_owned()
    };
    assert_eq!(
        options.and_then(|o| o.name.as_deref()),
        Some(name.as_str()),
        "{collection}: the index on {key}"
    );
}

/// Work-around for SecantusDB 0.7.0b3 only: it deadlocks (the `create` spins in
/// WiredTiger holding a lock that the `insert` waits for, and neither ever answers) when a
/// `create` of a new collection and an `insert` that creates the same collection
/// implicitly run at the same time. mongoose creates each model's collection
/// (`autoCreate`) while mongoose-auto-increment (when the plugin is applied) and
/// @typegoose/auto-increment (at the first save) insert their first counter into
/// `identitycounters`, so there the collection is created before the tool runs. Every
/// other server gets the tools as they are.
pub async fn create_identitycounters_on_secantus(db: &Database) {
    if secantus() {
        db.create_collection("identitycounters").await.unwrap();
    }
}

/// Whether the test server is nx-27017 (for its work-arounds, each commented).
pub fn nx() -> bool {
    seqid_harness::server_flavor().unwrap() == ServerFlavor::Nx
}

/// Whether the test server is SecantusDB (for its work-arounds, each commented).
pub fn secantus() -> bool {
    seqid_harness::server_flavor().unwrap() == ServerFlavor::Secantus
}
