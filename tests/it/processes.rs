//! Several OS processes share one sequence: tasks here and in worker processes
//! (`seqid-worker`) insert at once, for every strategy, on `_id` and per scope, with
//! unique documents and with documents all equal but for the id (issue 17), through
//! `Sequences` handles and bare databases; beside them, the MongoDB tutorial's code by
//! hand and plain `$inc: 1` writers. Every document is checked by count, by id (and, when
//! unique, by content), and the ids by the strategy's promise.

use seqid::{Document, Strategy};

use std::collections::BTreeSet;

use crate::support::ledger::{Told, assert_strategy, check, check_others};
use crate::support::models::{
    BlockDoc, CountedDoc, EqualBlock, EqualCounted, EqualGapless, EqualOptimistic, EqualTracker,
    GaplessDoc, Model, OptimisticDoc, PROJECTS, ScopedBlock, ScopedCounted, ScopedEqualBlock,
    ScopedEqualCounted, ScopedEqualOptimistic, ScopedOptimistic, TrackerDoc,
};
use crate::support::transactions::without_transactions;
use crate::support::tutorial::plain_increment;
use crate::support::writers::{Op, Via, worker_mode, write};
use crate::support::{Workers, counter_value, one_to, seed_string_id};

/// How a multi-process run is laid out.
#[derive(Clone, Copy)]
struct Plan {
    /// Every writer inserts through a `handle` or a `bare` database.
    via: &'static str,
    /// How the writers' tasks insert.
    op: Op,
    /// Tasks in this process, and documents per task.
    here: (usize, u32),
    /// Worker processes, their tasks each, and documents per task.
    processes: (usize, usize, u32),
    /// The collections (and the counters') exist beforehand (concurrent transactions that
    /// would create them conflict), and writer `first` inserts one document per scope, one
    /// at a time: the counters exist before the writers race (SecantusDB may answer a
    /// concurrent first use's upsert with no document, a gap that a bare database cannot
    /// count; see `assert_dense`).
    first_use: bool,
    /// The tutorial's code by hand (the optimistic loop, or getNextSequence on the same
    /// counter), in a process of its own, for this many documents.
    tutorial: Option<u32>,
    /// A plain `$inc: 1` writer (the tutorial's getNextSequence) of the counter, in this
    /// process, for this many ids: they must be distinct and none of seqid's.
    plain: Option<usize>,
    /// How many holders of a block of 10 ids may have left it part used (see
    /// `assert_strategy`); not judged beside a plain writer.
    holders: usize,
}

/// What [`Plan`] the equal-document runs share: writer `seqid` in this process and in two
/// others, 6 tasks each, half of them inserting one document per call and half in
/// batches; the tutorial's code by hand in a fourth process for an unscoped model but
/// gapless.
const fn equal(via: &'static str, tutorial: bool) -> Plan {
    Plan {
        via,
        op: Op::Both,
        here: (6, 8),
        processes: (2, 6, 8),
        first_use: true,
        tutorial: if tutorial { Some(100) } else { None },
        plain: None,
        holders: 3 + 1,
    }
}

/// A unique-document run through handles, one document per call.
const fn unique(here: (usize, u32), processes: (usize, usize, u32), holders: usize) -> Plan {
    Plan {
        via: "handle",
        op: Op::One,
        here,
        processes,
        first_use: false,
        tutorial: None,
        plain: None,
        holders,
    }
}

/// The tutorial's code by hand on the collection and counter of `T`, if it has one.
fn tutorial_of<T: Document>() -> &'static str {
    match T::SEQUENCE.strategy {
        Strategy::Optimistic { .. } => "tutorial",
        Strategy::Block { .. } => "tutorial-block",
        _ => "tutorial-counters",
    }
}

/// Writers of `T` in this process and in `plan.processes` others at once (see [`Plan`]).
/// With unique documents, each process is a writer of its own (`parent`, `process0`,
/// ...) and each task too (`parent-3`); with equal documents, every process and task is
/// writer `seqid`. Checked by count, by id and by content (`ledger::check`), and by the
/// strategy's promise.
async fn across_processes<T: Model>(label: &str, plan: Plan) {
    let test = seqid_harness::test_db(label).await;
    if T::SEQUENCE.strategy == Strategy::Gapless && without_transactions(&test).await {
        return;
    }
    if plan.first_use {
        for collection in [T::SEQUENCE.collection, T::SEQUENCE.counters] {
            test.create_collection(collection).await.unwrap();
        }
    }
    T::create_indexes(&*test).await.unwrap();
    if T::SEQUENCE.scope.is_empty() && matches!(T::SEQUENCE.strategy, Strategy::Optimistic { .. }) {
        seed_string_id(&test, T::SEQUENCE.collection).await;
    }
    let via = Via::on(plan.via, test.client(), test.name()).unwrap();
    let mut told = Told::default();
    let mut expected = Vec::new();
    if plan.first_use {
        let lines = write::<T>(&via, "first", 1, PROJECTS, Op::One)
            .await
            .unwrap();
        told.add::<T>(lines);
        told.retries += via.retries::<T>();
        expected.push(("first".to_owned(), PROJECTS as usize));
    }
    let (processes, tasks, per_task) = plan.processes;
    let (here, writers): (&str, Vec<String>) = match T::UNIQUE {
        true => (
            "parent",
            (0..processes).map(|p| format!("process{p}")).collect(),
        ),
        false => ("seqid", vec!["seqid".to_owned(); processes]),
    };
    let modes = writers
        .iter()
        .map(|by| worker_mode(T::NAME, plan.via, plan.op, by));
    let mut workers = vec![Workers::spawn(&test, modes, tasks, per_task)];
    if let Some(count) = plan.tutorial {
        let mode = worker_mode(tutorial_of::<T>(), "bare", Op::One, "tutorial");
        workers.push(Workers::spawn(&test, [mode], 1, count));
        expected.push(("tutorial".to_owned(), count as usize));
    }
    workers.iter_mut().for_each(Workers::go);
    let plain = plan.plain.map(|count| {
        let db = test.db().clone();
        tokio::spawn(async move {
            let mut values = Vec::new();
            for _ in 0..count {
                values.push(plain_increment(&db, T::SEQUENCE.name).await.unwrap());
            }
            values
        })
    });
    let ours = write::<T>(&via, here, plan.here.0, plan.here.1, plan.op)
        .await
        .unwrap();
    told.add::<T>(ours);
    told.retries += via.retries::<T>();
    if let Via::Handle(db) = &via {
        eprintln!("{label}: in this process, {:?}", T::sequence().stats(db));
    }
    for workers in workers {
        let (theirs, retries) = workers.finish_lines().await;
        told.add::<T>(theirs);
        told.retries += retries;
    }
    let (mine, theirs) = (
        plan.here.0 * plan.here.1 as usize,
        tasks * per_task as usize,
    );
    match T::UNIQUE {
        true => {
            expected.push((here.to_owned(), mine));
            expected.extend(writers.into_iter().map(|by| (by, theirs)));
        }
        false => expected.push(("seqid".to_owned(), mine + processes * theirs)),
    }
    let expected: Vec<(&str, usize)> = expected.iter().map(|(by, n)| (by.as_str(), *n)).collect();
    let ids = check::<T>(&test, &told, &expected).await;
    match plain {
        Some(plain) => {
            let plain = plain.await.unwrap();
            let plain_set: std::collections::BTreeSet<i64> = plain.iter().copied().collect();
            assert_eq!(
                plain_set.len(),
                plain.len(),
                "the plain writer's values are distinct"
            );
            let overlap: Vec<&i64> = ids[""].iter().filter(|id| plain_set.contains(id)).collect();
            assert!(
                overlap.is_empty(),
                "ids handed out to the plain writer too: {overlap:?}"
            );
        }
        None => assert_strategy::<T>(&ids, &told, plan.holders),
    }
    if T::SEQUENCE.strategy == Strategy::Gapless {
        let n = told.acked.len() as i64;
        assert_eq!(counter_value(&test, T::SEQUENCE.name).await, Some(n));
    }
    // The other sequences (`check` saw every number once): a counter's numbers are dense
    // in each scope, as the primary's are.
    let others = check_others::<T>(&test).await;
    for (seq, numbers) in T::OTHERS.iter().zip(others) {
        let in_scopes: usize = numbers.values().map(BTreeSet::len).sum();
        assert_eq!(
            in_scopes,
            told.acked.len(),
            "{}: a number per document",
            seq.name
        );
        if seq.strategy == Strategy::Counters {
            for (scope, numbers) in &numbers {
                assert_eq!(numbers, &one_to(numbers.len()), "{}: {scope}", seq.name);
            }
        }
    }
}

/// `name: Model, plan;` makes test `name`, which runs `across_processes::<Model>`.
macro_rules! across_processes {
    ($($(#[$attr:meta])* $name:ident: $model:ty, $plan:expr;)*) => {$(
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            across_processes::<$model>(stringify!($name), $plan).await;
        }
    )*};
}

across_processes! {
    // Issue 26's tracker: a global `_id` and a number per project, two sequences in one
    // document. 16 tasks here and in each of two other processes, one per call and in
    // batches; equal documents with handles and bare.
    #[ignore = "full suite"]
    several_sequences_number_every_document_once_across_processes:
        TrackerDoc, Plan { op: Op::Both, ..unique((16, 20), (2, 16, 20), 0) };
    several_sequences_number_every_document_once_across_processes_equal_handles:
        EqualTracker, equal("handle", false);
    #[ignore = "full suite"]
    several_sequences_number_every_document_once_across_processes_equal_bare:
        EqualTracker, equal("bare", false);
    // 16 tasks here and in each of two other processes.
    #[ignore = "full suite"]
    counters_share_one_counter_across_processes: CountedDoc, unique((16, 40), (2, 16, 40), 0);
    counters_share_one_counter_across_processes_equal_handles:
        EqualCounted, equal("handle", true);
    #[ignore = "full suite"]
    counters_share_one_counter_across_processes_equal_bare: EqualCounted, equal("bare", true);
    // 64 tasks here, 16 in each of three other processes, and a plain `$inc: 1` writer.
    #[ignore = "full suite"]
    block_ids_are_unique_across_tasks_processes_and_a_plain_writer:
        BlockDoc, Plan { plain: Some(150), ..unique((64, 10), (3, 16, 25), 0) };
    #[ignore = "full suite"]
    block_ids_are_unique_across_processes_equal_handles: EqualBlock, equal("handle", true);
    block_ids_are_unique_across_processes_equal_bare: EqualBlock, equal("bare", true);
    // 32 tasks here, 8 in each of two other processes.
    #[ignore = "full suite"]
    optimistic_ids_are_one_to_n_across_tasks_and_processes:
        OptimisticDoc, unique((32, 25), (2, 8, 25), 0);
    #[ignore = "full suite"]
    optimistic_ids_are_one_to_n_across_processes_equal_handles:
        EqualOptimistic, equal("handle", true);
    optimistic_ids_are_one_to_n_across_processes_equal_bare:
        EqualOptimistic, equal("bare", true);
    // 16 tasks here, 8 in each of two other processes, every insert in a transaction of
    // its own: the committed ids are exactly 1..=N, and the counter is N.
    #[ignore = "full suite"]
    gapless_ids_are_one_to_n_across_processes: GaplessDoc, unique((16, 10), (2, 8, 10), 0);
    gapless_ids_are_one_to_n_across_processes_equal_handles: EqualGapless, equal("handle", false);
    #[ignore = "full suite"]
    gapless_ids_are_one_to_n_across_processes_equal_bare: EqualGapless, equal("bare", false);
    // Per project: 64 tasks here and 16 in each of two other processes number documents
    // of four projects at once. Three processes hold a block of 10 of each project: at
    // most 3 × 10 reserved and not handed out.
    #[ignore = "full suite"]
    scoped_counters_number_each_scope_apart_across_processes:
        ScopedCounted, unique((64, 2 * PROJECTS), (2, 16, 2 * PROJECTS), 3);
    #[ignore = "full suite"]
    scoped_counters_number_each_scope_apart_across_processes_equal_handles:
        ScopedEqualCounted, equal("handle", false);
    scoped_counters_number_each_scope_apart_across_processes_equal_bare:
        ScopedEqualCounted, equal("bare", false);
    #[ignore = "full suite"]
    scoped_block_numbers_each_scope_apart_across_processes:
        ScopedBlock, unique((64, 2 * PROJECTS), (2, 16, 2 * PROJECTS), 3);
    #[ignore = "full suite"]
    scoped_block_numbers_each_scope_apart_across_processes_equal_handles:
        ScopedEqualBlock, equal("handle", false);
    scoped_block_numbers_each_scope_apart_across_processes_equal_bare:
        ScopedEqualBlock, equal("bare", false);
    #[ignore = "full suite"]
    scoped_optimistic_numbers_each_scope_apart_across_processes:
        ScopedOptimistic, unique((64, 2 * PROJECTS), (2, 16, 2 * PROJECTS), 3);
    #[ignore = "full suite"]
    scoped_optimistic_numbers_each_scope_apart_across_processes_equal_handles:
        ScopedEqualOptimistic, equal("handle", false);
    #[ignore = "full suite"]
    scoped_optimistic_numbers_each_scope_apart_across_processes_equal_bare:
        ScopedEqualOptimistic, equal("bare", false);
}
