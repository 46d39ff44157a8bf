//! A separate OS process for the multi-process tests: one writer inserting documents of
//! one model from many tasks, printing `<id> <writer> <n>` for each acknowledged one,
//! then `retries <counter upserts its handle retried>`.
//!
//! Usage: `seqid-worker <model>/<via>/<op>/<by> <database> <tasks> <per-task>`, with
//! `MONGODB_URI` set (see `tests/it/support/writers.rs`): writer `<by>` of the model
//! named `<model>` (or the MongoDB tutorial's code by hand, `tutorial...`), through a
//! `handle` or a `bare` database, `one` document per call, `many` in batches or `both`.
//! It prints `ready` once connected and starts when it reads a line on stdin, so that the
//! parent can start every writer at the same moment.
//!
//! `seqid-worker storm/<by> <database> <tasks> <quota>` instead runs the gapless storm's
//! writer `by` (`tests/it/support/storm.rs`): `tasks` tasks, each inserting in
//! transactions of its own until `quota` are committed, printing one `storm ...` line per
//! document made.
//!
//! `seqid-worker next/<via> <database> <tasks> <per-task>` instead takes numbers on their
//! own from the sequence [`NEXT_SEQUENCE`] (`db.sequence(..).next()`), through a `handle`
//! or a `bare` database: `per-task` from each of `tasks` tasks, printing `<id> <writer> <n>`
//! for each.
//!
//! `seqid-worker reserve/<model>/<via> <database> <tasks> <per-task>` instead stores
//! documents of an equal-document model, every other one under an id reserved before it
//! was built (`reserve_id`, `insert(..).reserved(token)`), printing `<id> <writer> <n>`.
//! `seqid-worker items/<first>/<docs> <database> <tasks> <per-task>` instead appends lines to
//! the `docs` orders from `_id: first` (`tests/it/support/items.rs`) through a handle:
//! `per-task` calls,
//! one line each, from each of `tasks` tasks, printing `items <order> <number> <writer> <n>`
//! for each number answered.
//!
//! `seqid-worker keyed/<model>/<via> <database> <tasks> <keys>` instead races `tasks`
//! callers of `find_or_insert` over keys `0..keys` of the keyed model named `<model>`
//! (`tests/it/support/keyed.rs`), printing one `keyed ...` line per call.

// The suite's ledger finds documents by their codes (`Model::find_by_code`); a worker
// only writes them.
#[allow(dead_code)]
#[path = "../it/support/models.rs"]
mod models;
// The keyed models and their race; the parsing of these lines is the parent's.
#[allow(dead_code)]
#[path = "../it/support/keyed.rs"]
mod keyed;
// The drafts and their issuers, likewise.
#[allow(dead_code)]
#[path = "../it/support/drafts.rs"]
mod drafts;
// The items' models and their appenders.
#[allow(dead_code)]
#[path = "../it/support/items.rs"]
mod items;
// The gapless storm's writers; the parsing of their lines is the parent's.
#[allow(dead_code)]
#[path = "../it/support/storm.rs"]
mod storm;
#[path = "../it/support/tutorial.rs"]
mod tutorial;
// A worker runs one writer: the tests use the rest of this module (resuming, naming a
// worker's mode, the scope of a document).
#[allow(dead_code)]
#[path = "../it/support/writers.rs"]
mod writers;

use std::io::{BufRead, Write};
use std::time::Duration;

use models::{
    BlockDoc, CountedDoc, EqualBlock, EqualCounted, EqualGapless, EqualOptimistic, EqualTracker,
    GaplessDoc, Model, OptimisticDoc, ScopedBlock, ScopedCounted, ScopedEqualBlock,
    ScopedEqualCounted, ScopedEqualOptimistic, ScopedOptimistic, TrackerDoc,
};
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::Model as _;
use tutorial::counter_loop;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const DEADLINE: Duration = Duration::from_secs(300);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, database, tasks, per_task] = &args[..] else {
        fail("usage: seqid-worker <model>/<via>/<op>/<by> <database> <tasks> <per-task>");
    };
    let tasks: usize = tasks
        .parse()
        .unwrap_or_else(|_| fail("tasks must be a number"));
    let per_task: u32 = per_task
        .parse()
        .unwrap_or_else(|_| fail("per-task must be a number"));
    if let Some(drafted) = mode.strip_prefix("drafts/") {
        let Some((model, via)) = drafted.split_once('/') else {
            fail(&format!("bad mode {mode}"));
        };
        return issue_drafts(model, via, database, tasks);
    }
    if let Some(by) = mode.strip_prefix("storm/") {
        return run_storm(by, database, tasks, per_task);
    }
    if let Some(via) = mode.strip_prefix("next/") {
        return take_numbers(via, database, tasks, per_task);
    }
    if let Some(reserved) = mode.strip_prefix("reserve/") {
        let Some((model, via)) = reserved.split_once('/') else {
            fail(&format!("bad mode {mode}"));
        };
        return reserve_and_insert(model, via, database, tasks, per_task);
    }
    if let Some(orders) = mode.strip_prefix("items/") {
        let numbers = orders.split_once('/').and_then(|(first, docs)| {
            Some((first.parse::<i64>().ok()?, docs.parse::<i64>().ok()?))
        });
        let Some((first, docs)) = numbers else {
            fail(&format!("bad mode {mode}: items/<first>/<docs>"));
        };
        return append_items(first, docs, database, tasks, per_task);
    }
    if let Some(keyed) = mode.strip_prefix("keyed/") {
        let Some((model, via)) = keyed.split_once('/') else {
            fail(&format!("bad mode {mode}"));
        };
        return race_keyed(model, via, database, tasks, per_task);
    }
    let Some((model, via, op, by)) = parse_worker_mode(mode) else {
        fail(&format!("bad mode {mode}"));
    };
    at_go(via, database, |via| async move {
        let run = write_model(model, &via, by, tasks, per_task, op);
        let (lines, retries) = tokio::time::timeout(DEADLINE, run)
            .await
            .map_err(|_| "deadline passed")??;
        let mut printed: Vec<String> = lines
            .into_iter()
            .map(|(id, writer, n)| format!("{id} {writer} {n}"))
            .collect();
        // Counter upserts retried (each may leave a gap on a server that applies an
        // upsert and answers it with no document), for the parent's check.
        printed.push(format!("retries {retries}"));
        Ok(printed)
    });
}

/// Connects to `database` through `via` (`handle` or `bare`: one handle per process, as an
/// application keeps one next to its client), prints `ready`, waits for the parent's line on
/// stdin, runs `work`, and prints the lines it returns; any error fails the process.
fn at_go<F, Fut>(via: &str, database: &str, work: F)
where
    F: FnOnce(writers::Via) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<String>, BoxError>>,
{
    let uri = std::env::var("MONGODB_URI").unwrap_or_else(|_| fail("MONGODB_URI is not set"));
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| fail(&e.to_string()));
    let result = runtime.block_on(async {
        let client = mongodb::Client::with_uri_str(&uri).await?;
        let via = writers::Via::on(via, &client, database)
            .unwrap_or_else(|| fail(&format!("bad database kind {via}")));
        via.db().run_command(doc! { "ping": 1 }).await?;
        println!("ready");
        std::io::stdout().flush()?;
        std::io::stdin().lock().read_line(&mut String::new())?;
        let lines = work(via).await?;
        let mut out = std::io::stdout().lock();
        for line in lines {
            writeln!(out, "{line}")?;
        }
        Ok::<_, BoxError>(())
    });
    if let Err(error) = result {
        fail(&error.to_string());
    }
}

/// The sequence the `next/<via>` mode takes numbers from (`tests/it/next.rs`).
const NEXT_SEQUENCE: &str = "next_processes";

/// The `next/<via>` mode: `tasks` tasks each take `per_task` numbers on their own from
/// [`NEXT_SEQUENCE`], one call each, printed as `<id> next-<pid>-<task> <n>`.
fn take_numbers(via: &str, database: &str, tasks: usize, per_task: u32) {
    use seqid::AsDatabase;
    at_go(via, database, |via| async move {
        let mut takers = tokio::task::JoinSet::new();
        for task in 0..tasks {
            let via = match &via {
                writers::Via::Handle(db) => writers::Via::Handle(db.clone()),
                writers::Via::Bare(db) => writers::Via::Bare(db.clone()),
            };
            let writer = format!("next-{}-{task}", std::process::id());
            takers.spawn(async move {
                let mut lines = Vec::new();
                for n in 0..per_task {
                    let id = match &via {
                        writers::Via::Handle(db) => db.sequence(NEXT_SEQUENCE).next().await,
                        writers::Via::Bare(db) => db.sequence(NEXT_SEQUENCE).next().await,
                    };
                    lines.push(format!("{} {writer} {n}", id?));
                }
                Ok::<_, BoxError>(lines)
            });
        }
        let run = async {
            let mut printed = Vec::new();
            while let Some(taken) = takers.join_next().await {
                printed.extend(taken??);
            }
            Ok::<_, BoxError>(printed)
        };
        tokio::time::timeout(DEADLINE, run)
            .await
            .map_err(|_| "deadline passed")?
    });
}

/// The `reserve/<model>/<via>` mode: `tasks` tasks of writer `seqid` each store
/// `per_task` documents of the equal-document model named `<model>` (counters, block or
/// gapless), every other one under an id reserved before it was built
/// (`writers::write_reserved`), each printed as `<id> <writer> <n>`.
fn reserve_and_insert(model: &str, via: &str, database: &str, tasks: usize, per_task: u32) {
    at_go(via, database, |via| async move {
        macro_rules! write {
            ($($model:ty),*) => {$(
                if model == <$model as Model>::NAME {
                    let run = writers::write_reserved::<$model>(&via, "seqid", tasks, per_task);
                    let lines = tokio::time::timeout(DEADLINE, run)
                        .await
                        .map_err(|_| "deadline passed")??;
                    let printed = lines.into_iter().map(|(id, writer, n)| format!("{id} {writer} {n}"));
                    return Ok(printed.collect());
                }
            )*};
        }
        write!(EqualCounted, EqualBlock, EqualGapless);
        Err(format!("no model {model} reserves ids").into())
    });
}

/// The `items/<first>/<docs>` mode: see [`items::append_from_tasks`].
fn append_items(first: i64, docs: i64, database: &str, tasks: usize, per_task: u32) {
    at_go("handle", database, |via| async move {
        let writers::Via::Handle(db) = via else {
            fail("items/<first>/<docs> runs through a handle");
        };
        let run = items::append_from_tasks(db, first, docs, tasks, per_task as usize);
        let got = tokio::time::timeout(DEADLINE, run)
            .await
            .map_err(|_| "deadline passed")??;
        let pid = std::process::id();
        Ok(got
            .into_iter()
            .map(|(order, number, task, n)| format!("items {order} {number} {pid}-{task} {n}"))
            .collect())
    });
}

/// The `storm/<by>` mode: `tasks` tasks of writer `by` insert gapless documents
/// ([`GaplessDoc`]) through a handle, one per transaction, until each has committed
/// `quota` (see `storm::storm`), never cancelling a call; every run printed as
/// `storm::print` writes it.
fn run_storm(by: &str, database: &str, tasks: usize, quota: u32) {
    at_go("handle", database, |via| async move {
        let run = storm::storm::<GaplessDoc>(&via, by, tasks, quota as usize, || None);
        let stormed = tokio::time::timeout(DEADLINE, run)
            .await
            .map_err(|_| "deadline passed")?;
        Ok(storm::print(&stormed))
    });
}

/// The `keyed/<model>/<via>` mode: `tasks` callers racing over `keys` keys (see
/// `keyed::race`), each call printed as `keyed::print` writes it.
fn race_keyed(model: &str, via: &str, database: &str, tasks: usize, keys: u32) {
    at_go(via, database, |via| async move {
        let label = format!("p{}", std::process::id());
        macro_rules! race {
            ($($model:ty),*) => {$(
                if model == <$model as keyed::Keyed>::NAME {
                    let run = keyed::race::<$model>(&via, &label, tasks, keys, true);
                    let (calls, _) = tokio::time::timeout(DEADLINE, run)
                        .await
                        .map_err(|_| "deadline passed")?;
                    return Ok(calls.iter().map(keyed::print).collect());
                }
            )*};
        }
        race!(
            keyed::KeyedCounters,
            keyed::KeyedBlock,
            keyed::KeyedOptimistic,
            keyed::KeyedIssue,
            keyed::KeyedTicket
        );
        Err(format!("unknown keyed model {model}").into())
    });
}

/// The `drafts/<model>/<via>` mode: `tasks` issuers racing to number every draft of the
/// collection, in the order the drafts were made (see `drafts::race_issuers`), each answer
/// printed as `drafts::print` writes it.
fn issue_drafts(model: &str, via: &str, database: &str, tasks: usize) {
    at_go(via, database, |via| async move {
        macro_rules! issue {
            ($($model:ty = $name:literal),*) => {$(
                if model == $name {
                    let ids = drafts::draft_ids::<$model>(via.db()).await;
                    let run = drafts::race_issuers::<$model>(&via, &ids, tasks);
                    let (answers, _) = tokio::time::timeout(DEADLINE, run)
                        .await
                        .map_err(|_| "deadline passed")?;
                    return Ok(answers.iter().map(drafts::print).collect());
                }
            )*};
        }
        issue!(
            drafts::DraftCounted = "counters",
            drafts::DraftBlock = "block"
        );
        Err(format!("unknown drafts model {model}").into())
    });
}

/// Runs writer `by` of the model named `model` (a [`Model::NAME`]; or by hand, without
/// seqid: `tutorial`, the tutorial's optimistic loop on [`EqualOptimistic`]'s collection,
/// and `tutorial-counters` and `tutorial-block`, its getNextSequence on the counter and
/// collection of [`EqualCounted`] and [`EqualBlock`]), as the worker processes do;
/// returns what the calls were told and the handle's counter retries.
async fn write_model(
    model: &str,
    via: &writers::Via,
    by: &str,
    tasks: usize,
    per_task: u32,
    op: writers::Op,
) -> Result<(Vec<writers::Line>, u64), BoxError> {
    macro_rules! run {
        ($($model:ty),*) => {$(
            if model == <$model>::NAME {
                let lines = writers::write::<$model>(via, by, tasks, per_task, op).await?;
                return Ok((lines, via.retries::<$model>()));
            }
        )*};
    }
    run!(
        CountedDoc,
        OptimisticDoc,
        BlockDoc,
        GaplessDoc,
        ScopedCounted,
        ScopedBlock,
        ScopedOptimistic,
        EqualCounted,
        EqualBlock,
        EqualOptimistic,
        EqualGapless,
        ScopedEqualCounted,
        ScopedEqualBlock,
        ScopedEqualOptimistic,
        TrackerDoc,
        EqualTracker
    );
    let (db, count) = (via.db(), tasks as u32 * per_task);
    let ids = match model {
        "tutorial" => {
            let collection = EqualOptimistic::SEQUENCE.collection;
            optimistic_loop(db, collection, by, count, false).await?
        }
        "tutorial-unique" => {
            let collection = OptimisticDoc::SEQUENCE.collection;
            optimistic_loop(db, collection, by, count, true).await?
        }
        "tutorial-counters" | "tutorial-block" => {
            let seq = match model {
                "tutorial-counters" => EqualCounted::SEQUENCE,
                _ => EqualBlock::SEQUENCE,
            };
            counter_loop(db, seq.name, seq.collection, by, count).await?
        }
        other => return Err(format!("unknown model {other}").into()),
    };
    let lines = ids
        .into_iter()
        .zip(0..)
        .map(|(id, n)| (id, by.to_owned(), n));
    Ok((lines.collect(), 0))
}

/// Parses `writers::worker_mode`'s `<model>/<via>/<op>/<by>`.
fn parse_worker_mode(mode: &str) -> Option<(&str, &str, writers::Op, &str)> {
    let mut parts = mode.splitn(4, '/');
    let (model, via, op, by) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    Some((model, via, parse_op(op)?, by))
}

/// The tutorial's optimistic loop, by hand: the largest numeric `_id` plus one,
/// inserted, and on a duplicate key (11000) the same again; `count` documents
/// `{ _id, writer }` (and `n` when `numbered`); returns the ids.
///
/// The query is bounded to numbers (`$lte: Infinity`): a string `_id` sorts above them,
/// and nx-27017 orders an unfiltered sort on `_id` as text.
pub async fn optimistic_loop(
    db: &mongodb::Database,
    collection: &str,
    by: &str,
    count: u32,
    numbered: bool,
) -> Result<Vec<i64>, BoxError> {
    let coll = db.collection::<BsonDocument>(collection);
    let next = || async {
        let top = coll
            .find_one(doc! { "_id": { "$lte": f64::INFINITY } })
            .sort(doc! { "_id": -1 })
            .projection(doc! { "_id": 1 })
            .await?;
        match top.as_ref().and_then(|top| top.get("_id")) {
            None => Ok(1),
            Some(Bson::Int32(v)) => Ok(i64::from(*v) + 1),
            Some(Bson::Int64(v)) => Ok(v + 1),
            Some(Bson::Double(v)) => Ok(*v as i64 + 1),
            Some(other) => Err(format!("a numeric query found {other}").into()),
        }
    };
    tutorial::by_hand(db, collection, by, count, true, numbered, next).await
}

fn parse_op(name: &str) -> Option<writers::Op> {
    use writers::Op;
    [Op::One, Op::Many, Op::Both]
        .into_iter()
        .find(|op| op.name() == name)
}

fn fail(message: &str) -> ! {
    eprintln!("seqid-worker: {message}");
    std::process::exit(1)
}
