//! Documents all equal but for the id (issue 17): every concurrency, multi-process and
//! fault scenario of the other test files, written by writers whose documents are
//! identical (`common/equal.rs`), through a `Sequences` handle and a bare database, with
//! `insert` and `insert_many`.
//!
//! Nothing in such a document tells one caller's from another's, so nothing but the
//! server's acknowledgement of a caller's own write may tell it "stored under id N". Each
//! test checks by count and by id: no id acknowledged twice, each acknowledged id holds a
//! document of the writer told so, as many documents of each writer stored as
//! acknowledged (where faults leave outcomes unknown, at most that many more), and each
//! writer's count exact.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::equal::{
    BATCH, Equal, EqualBlock, EqualCounted, EqualGapless, Line, Op, ScopedEqualBlock,
    ScopedEqualCounted, ScopedEqualOptimistic, Ticket, Via, scope_of, worker_mode, write,
};
use common::models::PROJECTS;
use common::transactions::{Make, in_transactions, without_transactions};
use common::{Workers, all_documents, assert_dense, counter_value, integer, one_to};
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::{Document, Strategy};
use seqid_harness::test_db;

/// What the writers were told, and what they could not learn.
#[derive(Default, Debug)]
struct Told {
    /// `(scope, id, writer)` of every acknowledgement: one per document a call was told
    /// is stored (`""` is the scope of an unscoped sequence).
    acked: Vec<(String, i64, String)>,
    /// Per writer, the documents whose outcome stayed unknown.
    unknown: BTreeMap<String, usize>,
    /// Counter upserts retried by the handles (see `common::assert_dense`).
    retries: u64,
}

impl Told {
    /// Adds what the calls of a writer of `T` were told.
    fn add<T: Document>(&mut self, lines: Vec<Line>) {
        self.acked.extend(
            lines
                .into_iter()
                .map(|(id, by, n)| (scope_of::<T>(n), id, by)),
        );
    }

    fn acked_by(&self, writer: &str) -> usize {
        self.acked.iter().filter(|(.., by)| by == writer).count()
    }

    fn unknown_of(&self, writer: &str) -> usize {
        self.unknown.get(writer).copied().unwrap_or(0)
    }
}

/// The stored documents of `T`'s collection, `(scope, id) -> writer`; a string `_id`
/// (the seed that nx-27017 needs, see `seed_string_id`) is passed over.
async fn stored<T: Document>(db: &mongodb::Database) -> BTreeMap<(String, i64), String> {
    let seq = T::SEQUENCE;
    let mut stored = BTreeMap::new();
    for d in all_documents(db, seq.collection).await {
        if matches!(d.get("_id"), Some(Bson::String(_))) {
            continue;
        }
        let scope = match seq.scope.first() {
            Some(field) => d.get_str(field).unwrap().to_owned(),
            None => String::new(),
        };
        let id = d
            .get(seq.field)
            .and_then(integer)
            .unwrap_or_else(|| panic!("no integer {} in {d}", seq.field));
        let by = d
            .get_str("by")
            .unwrap_or_else(|_| panic!("no writer in {d}"));
        if let Some(first) = stored.insert((scope.clone(), id), by.to_owned()) {
            panic!("{scope}/{id} stored twice: by {first} and {by}");
        }
    }
    stored
}

/// Holds `T`'s collection to what the writers were told, by count and by id: no id
/// acknowledged twice; every acknowledged id holds a document of the writer told so;
/// each writer has as many documents stored as acknowledged, or up to its unknown
/// outcomes more; and each writer in `expected` wrote exactly that many documents
/// (acknowledged or unknown). Returns the acknowledged ids of each scope.
async fn check<T: Document>(
    db: &mongodb::Database,
    told: &Told,
    expected: &[(&str, usize)],
) -> BTreeMap<String, BTreeSet<i64>> {
    let stored = stored::<T>(db).await;
    let mut problems = Vec::new();
    let mut told_at: BTreeMap<(String, i64), Vec<&str>> = BTreeMap::new();
    for (scope, id, by) in &told.acked {
        told_at.entry((scope.clone(), *id)).or_default().push(by);
    }
    let twice: Vec<_> = told_at.iter().filter(|(_, by)| by.len() > 1).collect();
    if !twice.is_empty() {
        problems.push(format!(
            "{} ids acknowledged more than once: {} acknowledgements for {} distinct ids; \
             e.g. {:?}",
            twice.len(),
            told.acked.len(),
            told_at.len(),
            twice.iter().take(5).collect::<Vec<_>>()
        ));
    }
    let wrong: Vec<_> = told_at
        .iter()
        .flat_map(|(key, writers)| writers.iter().map(move |by| (key, by)))
        .filter(|(key, by)| stored.get(key).map(String::as_str) != Some(**by))
        .map(|(key, by)| format!("{by} told {key:?}, which holds {:?}", stored.get(key)))
        .collect();
    if !wrong.is_empty() {
        problems.push(format!(
            "{} acknowledged ids do not hold a document of their writer; e.g. {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(5)]
        ));
    }
    let writers: BTreeSet<&str> = told
        .acked
        .iter()
        .map(|(.., by)| by.as_str())
        .chain(stored.values().map(String::as_str))
        .chain(expected.iter().map(|(by, _)| *by))
        .collect();
    let mut summary = Vec::new();
    for writer in writers {
        let acked = told.acked_by(writer);
        let unknown = told.unknown_of(writer);
        let kept = stored.values().filter(|by| *by == writer).count();
        summary.push(format!(
            "{writer}: {acked} acknowledged, {kept} stored, {unknown} unknown"
        ));
        if kept < acked || kept > acked + unknown {
            problems.push(format!(
                "{writer}: {acked} acknowledged and {unknown} unknown, but {kept} stored"
            ));
        }
        if let Some((_, n)) = expected.iter().find(|(by, _)| *by == writer)
            && acked + unknown != *n
        {
            problems.push(format!(
                "{writer} wrote {n} documents: {acked} acknowledged, {unknown} unknown"
            ));
        }
    }
    eprintln!("{}: {}", T::SEQUENCE.name, summary.join("; "));
    assert!(
        problems.is_empty(),
        "{}: {}\n({})",
        T::SEQUENCE.name,
        problems.join("\n"),
        summary.join("; ")
    );
    let mut ids: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for (scope, id, _) in &told.acked {
        ids.entry(scope.clone()).or_default().insert(*id);
    }
    ids
}

/// Judges the acknowledged ids of each scope by the strategy's promise, `n` documents
/// per scope, nothing failed: counters and gapless are dense (see `assert_dense` for
/// SecantusDB's counter retries), optimistic `1..=n`, blocks distinct and at most
/// `holders` blocks of 10 past `n`.
fn assert_strategy<T: Document>(
    ids: &BTreeMap<String, BTreeSet<i64>>,
    told: &Told,
    holders: usize,
) {
    let n = told.acked.len() / ids.len().max(1);
    for (scope, ids) in ids {
        assert_eq!(ids.len(), n, "{scope:?}: documents spread evenly");
        match T::SEQUENCE.strategy {
            Strategy::Counters => assert_dense(ids, n, told.retries),
            Strategy::Block { .. } => {
                let top = *ids.last().unwrap();
                let bound = (n + holders * 10) as i64 + 10 * told.retries as i64;
                assert!(top <= bound, "{scope:?}: ids up to {top} for {n} documents");
            }
            _ => assert_eq!(ids, &one_to(n), "{scope:?}: no gap, no repeat"),
        }
    }
}

/// A string `_id` in the optimistic collection. It is part of the issue's scenario, and a
/// work-around for nx-27017: it orders an unfiltered sort on `_id` as text ("99" above
/// "100"), and a string `_id` makes seqid use its numeric-bounded query, which nx orders
/// right (see `tests/optimistic.rs`). MongoDB orders both queries right.
async fn seed_string_id(db: &mongodb::Database) {
    db.collection::<BsonDocument>(Ticket::SEQUENCE.collection)
        .insert_one(doc! { "_id": "nx-27017 sorts _id as text" })
        .await
        .unwrap();
}

/// The issue's scenario: 16 tasks insert `Ticket { id: 0, by: "seqid" }` 40 times each
/// through `via`, while another OS process runs the tutorial's optimistic loop by hand
/// for 200 documents, on a collection that holds a string `_id`.
async fn issue_17(label: &str, via: &str) {
    let test = test_db(label).await;
    let via = Via::on(via, test.client(), test.name()).unwrap();
    seed_string_id(&test).await;
    let mut tutorial = Workers::spawn(
        &worker_mode("tutorial", "bare", Op::One, "tutorial"),
        &test,
        1,
        1,
        200,
    );
    tutorial.go();
    let ours = write::<Ticket>(&via, "seqid", 16, 40, Op::One)
        .await
        .unwrap();
    let (theirs, _) = tutorial.finish_lines().await;
    let mut told = Told::default();
    told.add::<Ticket>(ours);
    told.add::<Ticket>(theirs);
    let ids = check::<Ticket>(&test, &told, &[("seqid", 640), ("tutorial", 200)]).await;
    assert_strategy::<Ticket>(&ids, &told, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_17_bare_tasks_and_the_tutorial_loop_by_hand() {
    issue_17("equal_issue_bare", "bare").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_17_with_a_handle() {
    issue_17("equal_issue_handle", "handle").await;
}

/// Tasks per writer group, and documents per task, in the multi-process tests.
const TASKS: usize = 8;
const PER_TASK: u32 = 12;

/// A test database and the way its writers reach it, `None` for a gapless model, or
/// writers `in_transactions`, on a server without transactions (checked and said, see `without_transactions`). The
/// collections exist beforehand (concurrent transactions that would create them
/// conflict), a scoped model's unique index too, and the optimistic collection holds a
/// string `_id`.
async fn prepare<T: Document>(
    label: &str,
    via: &str,
    in_transactions: bool,
) -> Option<(seqid_harness::TestDb, Via)> {
    let test = test_db(label).await;
    let transactions = in_transactions || T::SEQUENCE.strategy == Strategy::Gapless;
    if transactions && without_transactions(&test).await {
        return None;
    }
    for collection in [T::SEQUENCE.collection, T::SEQUENCE.counters] {
        test.create_collection(collection).await.unwrap();
    }
    T::create_indexes(&*test).await.unwrap();
    if T::SEQUENCE.collection == Ticket::SEQUENCE.collection {
        seed_string_id(&test).await;
    }
    let via = Via::on(via, test.client(), test.name()).unwrap();
    Some((test, via))
}

/// Writer `first` inserts one document per scope, one at a time: the counters exist
/// before the writers race (SecantusDB may answer a concurrent first use's upsert with
/// no document, a gap that a bare database cannot count; see `assert_dense`).
async fn first_use<T: Equal>(via: &Via, told: &mut Told) {
    let lines = write::<T>(via, "first", 1, PROJECTS, Op::One)
        .await
        .unwrap();
    told.add::<T>(lines);
    told.retries += via.retries::<T>();
}

/// Writer `seqid` in this process and in two others, 8 tasks each, half of them inserting
/// one document per call and half in batches, all through `via` (`handle` or `bare`); for
/// the optimistic model, the tutorial's loop by hand in a fourth process too. Checked by
/// count and by id, and by the strategy's promise.
async fn processes<T: Equal>(label: &str, model: &str, via_kind: &str) {
    let Some((test, via)) = prepare::<T>(label, via_kind, false).await else {
        return;
    };
    let mut told = Told::default();
    first_use::<T>(&via, &mut told).await;
    let mode = worker_mode(model, via_kind, Op::Both, "seqid");
    let mut workers = vec![Workers::spawn(&mode, &test, 2, TASKS, PER_TASK)];
    let tutorial = model == "optimistic";
    if tutorial {
        let mode = worker_mode("tutorial", "bare", Op::One, "tutorial");
        workers.push(Workers::spawn(&mode, &test, 1, 1, 100));
    }
    workers.iter_mut().for_each(Workers::go);
    let ours = write::<T>(&via, "seqid", TASKS, PER_TASK, Op::Both)
        .await
        .unwrap();
    told.add::<T>(ours);
    told.retries += via.retries::<T>();
    for workers in workers {
        let (theirs, retries) = workers.finish_lines().await;
        told.add::<T>(theirs);
        told.retries += retries;
    }
    let seqid = 3 * TASKS * PER_TASK as usize;
    let mut expected = vec![("first", PROJECTS as usize), ("seqid", seqid)];
    if tutorial {
        expected.push(("tutorial", 100));
    }
    let ids = check::<T>(&test, &told, &expected).await;
    assert_strategy::<T>(&ids, &told, 3 + 1);
}

/// `name: Model, args...;` makes test `name`, which runs `$run::<Model>("name", args...)`.
macro_rules! equal_tests {
    ($run:ident: $($name:ident: $model:ty $(, $arg:expr)*;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            $run::<$model>(stringify!($name) $(, $arg)*).await;
        }
    )*};
}

equal_tests! { processes:
    counters_across_processes_with_handles: EqualCounted, "counters", "handle";
    counters_across_processes_bare: EqualCounted, "counters", "bare";
    block_across_processes_with_handles: EqualBlock, "block", "handle";
    block_across_processes_bare: EqualBlock, "block", "bare";
    optimistic_across_processes_with_handles: Ticket, "optimistic", "handle";
    optimistic_across_processes_bare: Ticket, "optimistic", "bare";
    gapless_across_processes_with_handles: EqualGapless, "gapless", "handle";
    gapless_across_processes_bare: EqualGapless, "gapless", "bare";
    scoped_counters_across_processes_with_handles: ScopedEqualCounted, "scoped-counters", "handle";
    scoped_counters_across_processes_bare: ScopedEqualCounted, "scoped-counters", "bare";
    scoped_block_across_processes_with_handles: ScopedEqualBlock, "scoped-block", "handle";
    scoped_block_across_processes_bare: ScopedEqualBlock, "scoped-block", "bare";
    scoped_optimistic_across_processes_with_handles: ScopedEqualOptimistic, "scoped-optimistic", "handle";
    scoped_optimistic_across_processes_bare: ScopedEqualOptimistic, "scoped-optimistic", "bare";
}

/// In `tests/transactions.rs`'s transactions, every document is writer `seqid`'s.
impl<T: Equal + Document<Id = i64>> Make for T {
    fn make(_: u32, n: u32) -> Self {
        T::equal("seqid", n)
    }
}

/// `tests/transactions.rs`'s transactions, some aborted, some retried after a write
/// conflict, with equal documents: through a handle and bare, one document or a batch
/// per transaction. Only committed documents are acknowledged, and stored; an attempt
/// that did not commit took an id no committed document has.
async fn in_transactions_equal<T: Equal + Make>(label: &str) {
    const TASKS: u32 = 8;
    const PER_TASK: u32 = 8;
    for (via, batch) in [
        ("handle", 1),
        ("bare", 1),
        ("handle", BATCH),
        ("bare", BATCH),
    ] {
        let label = format!("{label}_{via}_{batch}");
        let Some((test, via)) = prepare::<T>(&label, via, true).await else {
            return;
        };
        let mut told = Told::default();
        first_use::<T>(&via, &mut told).await;
        let seen = in_transactions::<T>(&via, TASKS, PER_TASK, batch).await;
        let committed = seen
            .committed
            .iter()
            .map(|&(id, _, n)| (id, "seqid".into(), n));
        told.add::<T>(committed.collect());
        // Every third transaction of tasks 0, 1 and 2 aborts on purpose.
        let aborted: u32 = (0..PER_TASK)
            .step_by(batch as usize)
            .skip(1)
            .step_by(3)
            .map(|first| batch.min(PER_TASK - first))
            .sum();
        let n = (TASKS * PER_TASK - 3 * aborted) as usize;
        let ids = check::<T>(&test, &told, &[("first", PROJECTS as usize), ("seqid", n)]).await;
        let ids = &ids[""];
        let all = n + PROJECTS as usize;
        match T::SEQUENCE.strategy {
            Strategy::Counters => {
                // Every id the counter handed out went to a committed document or an
                // attempt that did not commit (a gap), once.
                let last = counter_value(&test, T::SEQUENCE.name).await.unwrap();
                let mut every: Vec<i64> = ids.iter().chain(&seen.abandoned).copied().collect();
                every.sort_unstable();
                assert_eq!(every, (1..=last).collect::<Vec<_>>(), "{label}");
            }
            Strategy::Block { .. } => {
                let reserved = counter_value(&test, T::SEQUENCE.name).await.unwrap();
                assert!(ids.last().is_some_and(|&top| top <= reserved), "{label}");
                assert!(
                    seen.abandoned.iter().all(|id| !ids.contains(id)),
                    "{label}: an id of an attempt that did not commit was acknowledged"
                );
            }
            // A rolled back id was never stored (optimistic) or was taken back (gapless):
            // the next maximum, or counter, hands it out again. No gap.
            _ => {
                assert_eq!(ids, &one_to(all), "{label}: no gap");
                // An attempt that did not commit took ids of its snapshot: at most a
                // batch past the last.
                let top = (all + batch as usize) as i64;
                let beyond: Vec<_> = seen.abandoned.iter().filter(|&&id| id > top).collect();
                assert!(beyond.is_empty(), "{label}: abandoned {beyond:?}");
            }
        }
    }
}

equal_tests! { in_transactions_equal:
    gapless_in_transactions: EqualGapless;
    counters_in_transactions: EqualCounted;
    block_in_transactions: EqualBlock;
    optimistic_in_transactions: Ticket;
}
