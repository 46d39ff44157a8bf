//! State per deployment: two clients to two servers, with the same database name, never
//! share reserved ids or optimistic state, through `Sequences` handles or bare
//! `mongodb::Database`s, with unique documents and with documents all equal but for the
//! id; and a handle releases the state of sequences no longer in use.

use std::time::Duration;

use mongodb::Client;
use seqid::{Sequences, Strategy};
use seqid_harness::{RestartableServer, ServerFlavor, test_db};

use crate::support::ledger::{Told, assert_strategy, check};
use crate::support::models::{EqualBlock, EqualCounted, EqualOptimistic, Model, PROJECTS, WIDE};
use crate::support::writers::{Op, Via, insert_range, number_of, write};
use crate::support::{counter_value, seed_string_id};

unique_model!(
    Counted = "dep-counters",
    "dep_counted",
    collection = "dep_counted"
);
unique_model!(
    Blocked = "dep-block",
    "dep_block",
    collection = "dep_block",
    strategy = "block",
    block_size = 10
);
unique_model!(
    /// Bare optimistic inserts of one process share no candidate (they take turns), within
    /// a minute's budget (a stress model's).
    Optimistic = "dep-optimistic",
    "dep_opt",
    collection = "dep_opt",
    strategy = "optimistic",
    time_budget_ms = 60000
);

/// One insert through a handle's database.
async fn insert<T: Model>(db: &seqid::Database, writer: &str) -> i64 {
    let mut doc = T::make(writer, 0);
    doc.insert(db).await.unwrap();
    number_of(&doc)
}

/// How the two deployments are first used, before the writers race.
#[derive(Clone, Copy)]
enum FirstUse {
    /// One document at a time, alternating deployments, through handles then bare
    /// (writers `first-0` to `first-3`): each deployment counts on its own, giving these
    /// ids, and its counter (if any) ends at this value.
    Alternating([i64; 4], Option<i64>),
    /// Writer `first` stores one document per scope through each deployment's handle.
    Writer,
}

/// How the deployments are written.
#[derive(Clone, Copy)]
struct Plan {
    first: FirstUse,
    /// Tasks, each calling this many times, alternately into both deployments, half
    /// through handles and half bare (the task's parity).
    tasks: usize,
    calls: u32,
    /// Each task's documents per call (given the task's place among its route's tasks):
    /// `Op::One` or `Op::Both`.
    op: Op,
    /// The optimistic collection holds a string `_id` on both deployments
    /// (`seed_string_id`), not only on nx-27017's where it must.
    seed_everywhere: bool,
}

/// Unique documents: 16 tasks of 12 single inserts, after an alternating first use.
const fn unique(ids: [i64; 4], counter: Option<i64>) -> Plan {
    Plan {
        first: FirstUse::Alternating(ids, counter),
        tasks: 16,
        calls: 12,
        op: Op::One,
        seed_everywhere: false,
    }
}

/// Equal documents: 16 tasks of 8 calls, half of the tasks of each route inserting one
/// document per call and half in batches, after writer `first`.
const EQUAL: Plan = Plan {
    first: FirstUse::Writer,
    tasks: 16,
    calls: 8,
    op: Op::Both,
    seed_everywhere: true,
};

/// The deployments of `clients` (this process's server and another), with one database
/// name, written at once as `plan` says. Each holds what its writers were told, by count,
/// by id and (unique documents) by content: nothing of one was taken for the other's;
/// and its ids keep the strategy's promise on their own: counters dense up to the
/// counter, blocks within what the counter reserved and at most two blocks past the
/// documents, optimistic `1..=n`.
async fn on_two_deployments<T: Model>(clients: [&Client; 2], name: &str, plan: Plan) {
    let mut sides = Vec::new();
    for client in clients {
        let db = client.database(name);
        let nx = seqid_harness::server_flavor().unwrap() == ServerFlavor::Nx;
        let optimistic = matches!(T::SEQUENCE.strategy, Strategy::Optimistic { .. });
        if optimistic && (plan.seed_everywhere || nx && sides.is_empty()) {
            seed_string_id(&db, T::SEQUENCE.collection).await;
        }
        let vias = ["handle", "bare"].map(|kind| Via::on(kind, client, name).unwrap());
        sides.push((db, vias, Told::default()));
    }
    let first = match plan.first {
        FirstUse::Alternating(expected, counter) => {
            let mut seen = Vec::new();
            for k in 0..4 {
                let route = k / 2;
                let writer = format!("first-{k}");
                let mut ids = [0, 0];
                for (side, (_, vias, told)) in sides.iter_mut().enumerate() {
                    let docs = insert_range::<T>(&vias[route], &writer, 0..1)
                        .await
                        .unwrap();
                    ids[side] = number_of(&docs[0]);
                    told.add::<T>(vec![(ids[side], writer.clone(), 0)]);
                }
                seen.push((ids[0], ids[1]));
            }
            assert_eq!(
                seen,
                expected.map(|id| (id, id)),
                "{}: each deployment counts on its own",
                T::SEQUENCE.name
            );
            for (db, ..) in &sides {
                assert_eq!(counter_value(db, T::SEQUENCE.name).await, counter);
            }
            4
        }
        FirstUse::Writer => {
            for (_, vias, told) in &mut sides {
                let lines = write::<T>(&vias[0], "first", 1, PROJECTS, Op::One);
                told.add::<T>(lines.await.unwrap());
            }
            PROJECTS as usize
        }
    };
    let tasks: Vec<_> = (0..plan.tasks)
        .map(|task| {
            let vias: Vec<Via> = sides
                .iter()
                .map(|(_, vias, _)| vias[task % 2].clone())
                .collect();
            let writer = crate::support::writers::task_writer::<T>("seqid", task);
            tokio::spawn(async move {
                let mut lines = [Vec::new(), Vec::new()];
                let batch = plan.op.batch(task / 2);
                for call in 0..plan.calls {
                    let side = (task + call as usize) % 2;
                    let ns = call * batch..(call + 1) * batch;
                    let docs = insert_range::<T>(&vias[side], &writer, ns.clone())
                        .await
                        .unwrap();
                    lines[side].extend(
                        ns.zip(&docs)
                            .map(|(n, doc)| (number_of(doc), writer.clone(), n)),
                    );
                }
                lines
            })
        })
        .collect();
    let mut sent = [0, 0];
    for task in tasks {
        for (side, lines) in task.await.unwrap().into_iter().enumerate() {
            sent[side] += lines.len();
            sides[side].2.add::<T>(lines);
        }
    }
    for ((db, vias, told), sent) in sides.iter_mut().zip(sent) {
        told.retries = vias[0].retries::<T>();
        let expected = [("first", first), ("seqid", sent)];
        let ids = check::<T>(db, told, &expected).await;
        assert_strategy::<T>(&ids, told, 2);
        let ids = &ids[""];
        let n = ids.len() as i64;
        match T::SEQUENCE.strategy {
            Strategy::Counters => {
                let last = counter_value(db, T::SEQUENCE.name).await.unwrap();
                let dense: Vec<i64> = ids.iter().copied().collect();
                assert_eq!(dense, (1..=last).collect::<Vec<_>>(), "dense, on its own");
            }
            Strategy::Block { .. } => {
                let last = counter_value(db, T::SEQUENCE.name).await.unwrap();
                assert!(ids.last().is_some_and(|&top| top <= last));
            }
            _ => assert_eq!(ids, &(1..=n).collect(), "1..=n, on its own"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn two_deployments_with_one_database_name_share_nothing() {
    let test = test_db("deployments").await;
    let other = RestartableServer::start_async()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let other = other.client().await.unwrap();
    let clients = [test.client(), &other];
    // Handles first (1, 2), then bare (3, 4); a bare block insert reserves exactly
    // what it needs, past the handle's block of 10.
    on_two_deployments::<Counted>(clients, test.name(), unique([1, 2, 3, 4], Some(4))).await;
    on_two_deployments::<Blocked>(clients, test.name(), unique([1, 2, 11, 12], Some(12))).await;
    on_two_deployments::<Optimistic>(clients, test.name(), unique([1, 2, 3, 4], None)).await;
}

/// The same with equal documents, one model and one other deployment a test.
async fn two_deployments_equal<T: Model>(label: &str) {
    let test = test_db(label).await;
    let other = RestartableServer::start_async()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let other = other.client().await.unwrap();
    on_two_deployments::<T>([test.client(), &other], test.name(), EQUAL).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_deployments_share_no_counter_equal() {
    two_deployments_equal::<EqualCounted>("deployments_equal_counters").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn two_deployments_share_no_block_equal() {
    two_deployments_equal::<EqualBlock>("deployments_equal_block").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn two_deployments_share_no_optimistic_state_equal() {
    two_deployments_equal::<EqualOptimistic>("deployments_equal_optimistic").await;
}

/// Drops the databases whose names start with `prefix`.
async fn drop_databases(client: &mongodb::Client, prefix: &str) {
    for name in client.list_database_names().await.unwrap() {
        if name.starts_with(prefix) {
            client.database(&name).drop().await.unwrap();
        }
    }
}

#[tokio::test]
#[ignore = "full suite"]
async fn a_handle_releases_the_state_of_sequences_no_longer_used() {
    let client = seqid_harness::client().await.unwrap();
    let prefix = format!("idle_{}_", std::process::id());
    drop_databases(&client, &prefix).await;

    // Released as soon as unused: 100 tenants × 3 sequences leave little behind.
    let eager = Sequences::new(&client).release_idle_after(Duration::ZERO);
    let kept = Sequences::new(&client);
    let first = eager.database(&format!("{prefix}first"));
    assert_eq!(insert::<Blocked>(&first, "x").await, 1);
    let first_kept = kept.database(&format!("{prefix}kept"));
    assert_eq!(insert::<Blocked>(&first_kept, "x").await, 1);
    for tenant in 0..100 {
        for handle in [&eager, &kept] {
            let db = handle.database(&format!("{prefix}{tenant}"));
            insert::<Counted>(&db, "t").await;
            insert::<Blocked>(&db, "t").await;
            insert::<Optimistic>(&db, "t").await;
        }
    }
    let held = eager.held();
    // Each of the two maps (counters, collections) is swept when it reaches 64 entries
    // (and then twice what survived): what is left was used since the last sweep.
    assert!(held <= 2 * 64, "{held} sequences held for 100 idle tenants");
    assert_eq!(kept.held(), 301, "within 10 minutes everything is kept");

    // The block of the released sequence is gone: a gap of at most a block.
    let next = insert::<Blocked>(&first, "y").await;
    assert_eq!(next, 11, "ids 2..=10 were dropped with the block");
    let next = insert::<Blocked>(&first_kept, "y").await;
    assert_eq!(next, 2, "a block still held serves on");
    drop_databases(&client, &prefix).await;
}
