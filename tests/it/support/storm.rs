//! The gapless storm's writers (`gapless_storm.rs`): tasks that insert documents one per
//! transaction of their own, run with `Transaction`, until each has committed
//! its quota, through whatever befalls them (cancelled calls, a server killed and
//! restarted); and the fate of every document they made. Shared by the test and the
//! worker processes (`tests/bin/worker.rs`, mode `storm/<by>`).
//!
//! Every run of a transaction's callback makes a document of its own (writer `by-task`,
//! `n` counting the task's runs), `Transaction`'s own runs again included: no two attempts
//! share a content, so a document stored twice shows, and each stored document names the
//! one attempt that stored it. What became of each is judged from where its call ended:
//!
//! - acknowledged: `Transaction` returned its id (the commit succeeded);
//! - aborted: its insert failed (`Transaction` aborts the transaction, and runs the callback
//!   again or returns the error), or its call was cancelled before the commit was sent:
//!   no `commitTransaction` for it, so it never commits;
//! - unknown: its commit was sent and the call ended without the answer: cancelled, an
//!   error (the commit's outcome unknown), or its callback run again (see
//!   [`COMMIT_RETRIED`]).

use std::time::{Duration, Instant};

use mongodb::ClientSession;
use mongodb::options::{TransactionOptions, WriteConcern};
use seqid::action::Transaction;
use tokio::sync::Notify;

use super::models::Model;
use super::writers::{Via, number_of, task_writer};

/// How long a storm's tasks go on committing at most: on an idle machine all of them are
/// done within 10 s. Longer than the server's transaction lifetime (60 s), which bounds
/// how long a transaction nobody aborts (its client gone) holds the counter: one CI run
/// had a task stalled in one call for tens of seconds, and missed its quota at 45 s.
/// What the longest calls went through is printed (`Stormed::slowest`).
pub const DEADLINE: Duration = Duration::from_secs(90);

/// An unknown outcome whose commit was answered with a `TransientTransactionError`, so
/// that `Transaction` ran the callback again. On MongoDB that answer means the transaction did
/// not commit. Work-around for SecantusDB 0.7.0b3 only: it forgets a committed transaction
/// when restarted (as it forgets its retryable writes' records, see
/// `faults::a_retried_insert_meets_its_own_first_attempt_after_a_restart_on_secantusdb`),
/// and answers the driver's commit sent again across the restart `NoSuchTransaction` with
/// that label, although the first commit was applied. Such a run is held unknown, not
/// aborted; the test counts those found stored.
pub const COMMIT_RETRIED: &str = "commit-answered-transient";

/// The other ends of a run (see the module's docs), as printed.
pub const CANCELLED_IN_COMMIT: &str = "cancelled-in-commit";
pub const COMMIT_FAILED: &str = "commit-failed";
pub const INSERT_FAILED: &str = "insert-failed";
pub const CANCELLED_IN_CALLBACK: &str = "cancelled-in-callback";
pub const CANCELLED_IN_ABORT: &str = "cancelled-in-abort";

const REASONS: [&str; 6] = [
    COMMIT_RETRIED,
    CANCELLED_IN_COMMIT,
    COMMIT_FAILED,
    INSERT_FAILED,
    CANCELLED_IN_CALLBACK,
    CANCELLED_IN_ABORT,
];

/// When a call is given up on: it is dropped (a `tokio::time::timeout`'s way), and its
/// session with it (see [`storm_task`]).
#[derive(Clone, Copy, Debug)]
pub enum Cut {
    /// This long after the call starts.
    After(Duration),
    /// This long after its commit is sent (a callback run returned its id).
    InCommit(Duration),
}

/// What became of a run's document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Committed, under this id.
    Acked(i64),
    /// Committed or not: nobody was told.
    Unknown(&'static str),
    /// Never committed.
    Aborted(&'static str),
}

/// One run of a transaction's callback: document `n` of `writer`, and its fate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub writer: String,
    pub n: u32,
    pub fate: Fate,
}

/// What a storm's tasks did.
#[derive(Default, Debug)]
pub struct Stormed {
    pub runs: Vec<Run>,
    /// Calls (`Transaction`s), those cancelled by their caller's timeout, and those that
    /// returned an error (each followed by a short pause and a fresh call).
    pub calls: usize,
    pub cancelled: usize,
    pub errors: usize,
    /// The longest call of each task: how long, and what it went through.
    pub slowest: Vec<Slow>,
}

/// A task's longest call: its length, and what became of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slow {
    pub took: Duration,
    /// The writer, the callback's runs in the call, how it ended and the last error its
    /// runs met, as printed.
    pub what: String,
}

impl Stormed {
    pub fn merge(&mut self, other: Stormed) {
        self.runs.extend(other.runs);
        self.calls += other.calls;
        self.cancelled += other.cancelled;
        self.errors += other.errors;
        self.slowest.extend(other.slowest);
    }

    /// The `n` longest calls, longest first.
    pub fn longest_calls(&self, n: usize) -> Vec<&Slow> {
        let mut slowest: Vec<&Slow> = self.slowest.iter().collect();
        slowest.sort_by_key(|slow| std::cmp::Reverse(slow.took));
        slowest.truncate(n);
        slowest
    }

    /// Documents acknowledged to `writer`.
    pub fn acked_by(&self, writer: &str) -> usize {
        let acked = |run: &&Run| run.writer == writer && matches!(run.fate, Fate::Acked(_));
        self.runs.iter().filter(acked).count()
    }
}

/// Where a run stands while its call goes on.
#[derive(Clone, Copy)]
enum Stage {
    Inserting,
    InsertFailed,
    Inserted(i64),
    Settled(Fate),
}

/// A task's runs, and where its current call's begin.
#[derive(Default)]
struct Log {
    runs: Vec<(u32, Stage)>,
    call: usize,
    /// The last error an insert of the current call met.
    last_error: Option<String>,
}

impl Log {
    /// A new run of the current call's callback: its `n`.
    fn start_run(&mut self) -> u32 {
        // The run before it in this call returned its id, so its commit was sent: the
        // callback runs again only if the commit was answered TransientTransactionError.
        if let Some((_, stage @ Stage::Inserted(_))) = self.runs[self.call..].last_mut() {
            *stage = Stage::Settled(Fate::Unknown(COMMIT_RETRIED));
        }
        let n = u32::try_from(self.runs.len()).expect("runs fit u32");
        self.runs.push((n, Stage::Inserting));
        n
    }

    /// The current run's insert returned, with its id if it succeeded.
    fn inserted(&mut self, id: Option<i64>) {
        let (_, stage) = self.runs.last_mut().expect("a run");
        *stage = id.map_or(Stage::InsertFailed, Stage::Inserted);
    }

    /// The current call ended: `None` if cancelled, else what `Transaction` returned.
    fn end_call(&mut self, outcome: Option<&Result<i64, seqid::Error>>) {
        let runs = &mut self.runs[self.call..];
        if let Some((n, last)) = runs.last_mut() {
            let fate = match (outcome, *last) {
                (Some(Ok(id)), Stage::Inserted(inserted)) => {
                    assert_eq!(*id, inserted, "run {n}: Transaction returned its body's id");
                    Fate::Acked(*id)
                }
                (None, Stage::Inserted(_)) => Fate::Unknown(CANCELLED_IN_COMMIT),
                (Some(Err(_)), Stage::Inserted(_)) => Fate::Unknown(COMMIT_FAILED),
                (Some(Err(_)), Stage::InsertFailed) => Fate::Aborted(INSERT_FAILED),
                (None, Stage::Inserting) => Fate::Aborted(CANCELLED_IN_CALLBACK),
                (None, Stage::InsertFailed) => Fate::Aborted(CANCELLED_IN_ABORT),
                (outcome, _) => panic!("run {n}: a call ended with {outcome:?} after its run"),
            };
            *last = Stage::Settled(fate);
        }
        for (n, stage) in runs {
            *stage = match *stage {
                // Its transaction aborted, and `Transaction` ran the callback again.
                Stage::InsertFailed => Stage::Settled(Fate::Aborted(INSERT_FAILED)),
                Stage::Settled(fate) => Stage::Settled(fate),
                _ => panic!("run {n}: left unsettled by its call"),
            };
        }
        self.call = self.runs.len();
    }

    fn into_runs(self, writer: &str) -> Vec<Run> {
        let run = |(n, stage)| match stage {
            Stage::Settled(fate) => Run {
                writer: writer.to_owned(),
                n,
                fate,
            },
            _ => panic!("{writer} run {n}: never settled"),
        };
        self.runs.into_iter().map(run).collect()
    }
}

/// One call: a transaction of its own in `session`, run with `Transaction`, whose callback
/// inserts one new document of `writer` through `via`; returns its id. `committing` is
/// told when a callback run returns its id, before its commit.
async fn transaction<T: Model>(
    session: &mut ClientSession,
    via: &Via,
    writer: &str,
    log: &mut Log,
    committing: &Notify,
) -> Result<i64, seqid::Error> {
    // Journaled, as the fault suite's writes: the commit must survive a crash.
    let journaled = WriteConcern::builder().journal(true).build();
    let options = TransactionOptions::builder()
        .write_concern(journaled)
        .build();
    Transaction::new(session)
        .options(options)
        .run((via, writer, log, committing), |session, context| {
            let (via, writer, log, committing) = context;
            Box::pin(async move {
                let n = log.start_run();
                let mut docs = [T::make(writer, n)];
                let inserted = via.insert(&mut docs, Some(session)).await;
                log.inserted(inserted.is_ok().then(|| number_of(&docs[0])));
                if let Err(error) = &inserted {
                    // The driver's message, without the server's raw answer it ends with.
                    let error = error.to_string();
                    let shown = error.split(", source:").next().unwrap_or(&error);
                    log.last_error = Some(shown.to_owned());
                }
                inserted?;
                committing.notify_one();
                Ok::<_, seqid::Error>(number_of(&docs[0]))
            })
        })
        .await
}

/// Task `task` of writer `by`: calls until `quota` documents are committed (acknowledged)
/// or [`DEADLINE`] has passed. `cut` says, before each call, whether and when to give it
/// up ([`Cut`]). A call that returns an error is followed by a short pause and a new
/// call, with a new document.
///
/// Each call in a session of its own, dropped after the call as a service's request
/// handler drops it, cut or not: nothing is aborted by hand. The driver (3.9) aborts a
/// dropped session's transaction only if one of its commands has answered; seqid's gapless
/// insert makes sure one has before its `$inc` locks the counter (`Session::answered` in
/// the library), so that a call cut during its `$inc` does not leave the counter held
/// against every writer for the transaction's lifetime (60 s). Before that, 1 run in 5 of
/// this test stalled so.
pub async fn storm_task<T: Model>(
    via: &Via,
    by: &str,
    task: usize,
    quota: usize,
    cut: fn() -> Option<Cut>,
) -> Stormed {
    let writer = task_writer::<T>(by, task);
    let client = via.db().client();
    let deadline = Instant::now() + DEADLINE;
    let mut log = Log::default();
    let (mut acked, mut stormed) = (0, Stormed::default());
    while acked < quota && Instant::now() < deadline {
        stormed.calls += 1;
        let committing = Notify::new();
        let started = Instant::now();
        let first_run = log.runs.len();
        let mut session = client.start_session().await.expect("a session");
        let call = transaction::<T>(&mut session, via, &writer, &mut log, &committing);
        let outcome = match cut() {
            None => Some(call.await),
            Some(Cut::After(after)) => tokio::time::timeout(after, call).await.ok(),
            Some(Cut::InCommit(after)) => {
                let cut = async {
                    committing.notified().await;
                    tokio::time::sleep(after).await;
                };
                tokio::select! {
                    outcome = call => Some(outcome),
                    () = cut => None,
                }
            }
        };
        log.end_call(outcome.as_ref());
        let took = started.elapsed();
        if stormed.slowest.first().is_none_or(|slow| took > slow.took) {
            let ended = match &outcome {
                None => "cut".to_owned(),
                Some(Ok(id)) => format!("committed {id}"),
                Some(Err(error)) => format!("error: {error}"),
            };
            let what = format!(
                "{writer}: {} runs, {ended}; last insert error: {}",
                log.runs.len() - first_run,
                log.last_error.as_deref().unwrap_or("none"),
            );
            stormed.slowest = vec![Slow { took, what }];
        }
        log.last_error = None;
        match outcome {
            Some(Ok(_)) => acked += 1,
            Some(Err(error)) => {
                stormed.errors += 1;
                if std::env::var_os("SEQID_FAULTS_VERBOSE").is_some() {
                    eprintln!("{writer}: {error}");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            None => stormed.cancelled += 1,
        }
    }
    stormed.runs = log.into_runs(&writer);
    stormed
}

/// `tasks` tasks of writer `by` (see [`storm_task`]), each until `quota` committed.
pub async fn storm<T: Model>(
    via: &Via,
    by: &str,
    tasks: usize,
    quota: usize,
    cut: fn() -> Option<Cut>,
) -> Stormed {
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (via, by) = (via.clone(), by.to_owned());
            tokio::spawn(async move { storm_task::<T>(&via, &by, task, quota, cut).await })
        })
        .collect();
    let mut stormed = Stormed::default();
    for handle in handles {
        stormed.merge(handle.await.expect("a storm task panicked"));
    }
    stormed
}

/// A storm as a worker prints it: `storm <writer> <n> acked <id>`, `storm <writer> <n>
/// unknown <reason>` or `storm <writer> <n> aborted <reason>` per run, then `storm-calls
/// <calls> <cancelled> <errors>`, then `storm-slowest <micros> <what>` per task.
// Used by the worker processes only.
#[allow(dead_code)]
pub fn print(stormed: &Stormed) -> Vec<String> {
    let mut lines: Vec<String> = stormed
        .runs
        .iter()
        .map(|run| {
            let fate = match run.fate {
                Fate::Acked(id) => format!("acked {id}"),
                Fate::Unknown(why) => format!("unknown {why}"),
                Fate::Aborted(why) => format!("aborted {why}"),
            };
            format!("storm {} {} {fate}", run.writer, run.n)
        })
        .collect();
    lines.push(format!(
        "storm-calls {} {} {}",
        stormed.calls, stormed.cancelled, stormed.errors
    ));
    for slow in &stormed.slowest {
        let what = slow.what.replace('\n', " ");
        lines.push(format!("storm-slowest {} {what}", slow.took.as_micros()));
    }
    lines
}

/// The lines [`print()`] wrote, read back.
pub fn parse(lines: &[String]) -> Option<Stormed> {
    let mut stormed = Stormed::default();
    let reason = |why: &str| REASONS.into_iter().find(|&r| r == why);
    for line in lines {
        if let Some(slow) = line.strip_prefix("storm-slowest ") {
            let (micros, what) = slow.split_once(' ')?;
            stormed.slowest.push(Slow {
                took: Duration::from_micros(micros.parse().ok()?),
                what: what.to_owned(),
            });
            continue;
        }
        let fields: Vec<&str> = line.split(' ').collect();
        match fields[..] {
            ["storm", writer, n, fate, value] => stormed.runs.push(Run {
                writer: writer.to_owned(),
                n: n.parse().ok()?,
                fate: match fate {
                    "acked" => Fate::Acked(value.parse().ok()?),
                    "unknown" => Fate::Unknown(reason(value)?),
                    "aborted" => Fate::Aborted(reason(value)?),
                    _ => return None,
                },
            }),
            ["storm-calls", calls, cancelled, errors] => {
                stormed.calls += calls.parse::<usize>().ok()?;
                stormed.cancelled += cancelled.parse::<usize>().ok()?;
                stormed.errors += errors.parse::<usize>().ok()?;
            }
            _ => return None,
        }
    }
    Some(stormed)
}
