//! Item appends (issue 49): `append_<field>`, which numbers the items after the document's
//! mark in one `findAndModify` (an update pipeline; where the server has none, a read and a
//! conditional update), against a plain `$push` of the same item with the driver's
//! `update_one`, which numbers nothing. 1 and 16 appenders on one document.
//!
//! Each trial appends a fixed number of items ([`APPENDS`], split over the tasks) to a
//! document of its own, stored with no item just before: every contender's document grows
//! to the same size, so no contender pays for a longer array than another (and goes once
//! checked). Trials are
//! interleaved as `for round { for tasks { for contender in rotated(round) { trial } } }`.
//! After each trial its document is read back: the `$push` document holds every item, the
//! appended ones hold every item numbered exactly `1..=n` and the mark `n` (a wrong number
//! fails the run).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use mongodb::Collection;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::{Document, Item};
use serde::{Deserialize, Serialize};

use crate::Config;
use crate::model::BoxError;
use crate::probe::{Monitor, Trial};
use crate::stats::{Table, median, min_max, ratio_cell, verdict};

/// The collection of the part's documents.
const ORDERS: &str = "bench_item_orders";

/// Appends per trial (a multiple of 16), and with `--quick`.
const APPENDS: usize = 320;
const QUICK_APPENDS: usize = 64;

/// The appenders of one document, as the issue asks.
const TASKS: [usize; 2] = [1, 16];

/// The target: an append at least this fraction of a plain `$push`'s rate, where the
/// server has update pipelines (one round trip each).
const TARGET: f64 = 0.8;

/// An order line, numbered in its order.
#[derive(Clone, Debug, Serialize, Deserialize, Item)]
pub struct Line {
    #[seq_no]
    no: i64,
    sku: String,
    quantity: u32,
}

/// An order whose lines are numbered 1, 2, 3.
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("bench_item_orders", collection = "bench_item_orders")]
pub struct Order {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "lines_last")]
    lines: Vec<Line>,
    lines_last: i64,
}

fn line(task: usize, k: usize) -> Line {
    Line {
        no: 0,
        sku: format!("SKU-{task:02}-{k:04}"),
        quantity: 1,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Contender {
    Push,
    Append,
    AppendBare,
}

impl Contender {
    const ALL: [Contender; 3] = [Contender::Push, Contender::Append, Contender::AppendBare];

    fn label(self) -> &'static str {
        match self {
            Contender::Push => "plain `$push` of the item (driver `update_one`), unnumbered",
            Contender::Append => "seqid `Order::append_lines` (handle)",
            Contender::AppendBare => "seqid `Order::append_lines` (bare mongodb::Database)",
        }
    }

    /// Appends `item` to document `id`.
    async fn append(self, on: &On, id: i64, item: Line) -> Result<(), BoxError> {
        let filter = doc! { "_id": id };
        match self {
            Contender::Push => {
                let item = mongodb::bson::to_bson(&item)?;
                let pushed = on
                    .orders
                    .update_one(filter, doc! { "$push": { "lines": item } })
                    .await?;
                if pushed.matched_count != 1 {
                    return Err(format!("no order {id} to push to").into());
                }
            }
            Contender::Append => {
                Order::append_lines(&on.handle, filter, &mut [item]).await?;
            }
            Contender::AppendBare => {
                Order::append_lines(&on.bare, filter, &mut [item]).await?;
            }
        }
        Ok(())
    }
}

/// What the contenders append through, for the whole part.
struct On {
    handle: seqid::Database,
    bare: mongodb::Database,
    orders: Collection<BsonDocument>,
}

/// A new document with no item, then `appends` appends to it from `tasks` tasks, and the
/// document checked.
async fn trial(
    on: &Arc<On>,
    monitor: &Monitor,
    server_pid: Option<u32>,
    contender: Contender,
    tasks: usize,
    appends: usize,
) -> Result<Trial, BoxError> {
    let mut order = Order {
        id: 0,
        lines: Vec::new(),
        lines_last: 0,
    };
    order.insert(&on.handle).await?;
    let id = order.id;
    let per_task = appends / tasks;
    let before = monitor.snapshot(server_pid);
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let on = Arc::clone(on);
            tokio::spawn(async move {
                for k in 0..per_task {
                    contender.append(&on, id, line(task, k)).await?;
                }
                Ok::<_, BoxError>(())
            })
        })
        .collect();
    for handle in handles {
        handle.await??;
    }
    let elapsed = start.elapsed();
    let usage = before.delta(&monitor.snapshot(server_pid));
    check(on, contender, id, per_task * tasks).await?;
    // Each trial's document goes once checked, so that every trial's collection holds just
    // its own. Work-around for SecantusDB 0.7.0b3 only: a filter with an `$and` or an `$or`
    // (the append's guards) scans the collection, `_id` or not (MongoDB finds the document
    // by its `_id` index), and the trials would slow each other down as documents pile up.
    on.orders.delete_one(doc! { "_id": id }).await?;
    Ok(Trial {
        count: (per_task * tasks) as u64,
        elapsed,
        usage,
    })
}

/// The document holds `appends` items; appended ones numbered exactly `1..=appends`, each
/// item once, and the mark `appends`.
async fn check(on: &On, contender: Contender, id: i64, appends: usize) -> Result<(), BoxError> {
    let label = contender.label();
    let stored = on
        .orders
        .find_one(doc! { "_id": id })
        .await?
        .ok_or_else(|| format!("{label}: order {id} is gone"))?;
    let items = stored.get_array("lines")?.len();
    if items != appends {
        return Err(format!("{label}: order {id} holds {items} items, {appends} appended").into());
    }
    if contender == Contender::Push {
        return Ok(());
    }
    let mut lines = Vec::with_capacity(items);
    for item in stored.get_array("lines")? {
        lines.push(match item {
            Bson::Document(item) => mongodb::bson::from_document::<Line>(item.clone())?,
            // nx-27017 0.8.1 stores a subdocument given to `$push` as its JSON text (the
            // appends that went the conditional way); SecantusDB and MongoDB store it whole.
            Bson::String(text) => serde_json::from_str::<Line>(text)?,
            other => return Err(format!("{label}: order {id} holds the item {other}").into()),
        });
    }
    let mark = match stored.get("lines_last") {
        Some(Bson::Int32(mark)) => i64::from(*mark),
        Some(Bson::Int64(mark)) => *mark,
        other => return Err(format!("{label}: order {id}'s mark is {other:?}").into()),
    };
    let mut numbers: Vec<i64> = lines.iter().map(|l| l.no).collect();
    let mut skus: Vec<&str> = lines.iter().map(|l| l.sku.as_str()).collect();
    numbers.sort_unstable();
    skus.sort_unstable();
    skus.dedup();
    let dense = numbers.iter().copied().eq(1..=appends as i64);
    if !dense || skus.len() != appends || mark != appends as i64 {
        return Err(format!(
            "{label}: order {id}: {} distinct items, numbers {:?}..{:?} (exactly 1..={appends}: \
             {dense}), mark {}",
            skus.len(),
            numbers.first(),
            numbers.last(),
            mark
        )
        .into());
    }
    Ok(())
}

/// Each contender's trials by appenders: `trials[(contender, tasks)][round]`.
pub struct Results {
    trials: BTreeMap<(Contender, usize), Vec<Trial>>,
    appends: usize,
    /// Whether the server took the one-round-trip way (an update pipeline).
    pipeline: bool,
}

pub async fn run(
    db: &seqid::Database,
    monitor: &Monitor,
    server_pid: Option<u32>,
    config: &Config,
) -> Result<Results, BoxError> {
    let bare = db.client().database(db.name());
    let orders = bare.collection::<BsonDocument>(ORDERS);
    orders.drop().await?;
    let on = Arc::new(On {
        handle: seqid::Sequences::new(db.client()).database(db.name()),
        bare,
        orders,
    });
    let appends = if config.quick { QUICK_APPENDS } else { APPENDS };
    // Warm-up, not recorded (checked as well): opens the pool, and lets each append route
    // learn whether the server has update pipelines.
    for contender in Contender::ALL {
        trial(&on, monitor, server_pid, contender, 16, 32).await?;
    }
    let mut trials: BTreeMap<(Contender, usize), Vec<Trial>> = BTreeMap::new();
    for round in 0..config.rounds {
        for tasks in TASKS {
            let mut order = Contender::ALL;
            order.rotate_left(round % Contender::ALL.len());
            for contender in order {
                let t = trial(&on, monitor, server_pid, contender, tasks, appends).await?;
                trials.entry((contender, tasks)).or_default().push(t);
            }
        }
        eprintln!("  round {}/{} done", round + 1, config.rounds);
    }
    // One round trip per append where the server has update pipelines.
    let pipeline = median(
        &trials[&(Contender::Append, 1)]
            .iter()
            .map(Trial::round_trips)
            .collect::<Vec<_>>(),
    ) < 1.5;
    Ok(Results {
        trials,
        appends,
        pipeline,
    })
}

pub fn print(results: &Results) {
    println!(
        "{} appends per trial, each to a document of its own; the server {} update \
         pipelines.\n",
        results.appends,
        if results.pipeline { "has" } else { "has no" }
    );
    let mut table = Table::new(&[
        "appenders",
        "contender",
        "appends/s",
        "round trips/append",
        "client CPU µs/append",
        "× plain `$push`",
        "target",
        "met?",
    ]);
    let mut others = Vec::new();
    for tasks in TASKS {
        let push = &results.trials[&(Contender::Push, tasks)];
        for contender in Contender::ALL {
            let trials = &results.trials[&(contender, tasks)];
            let m = |f: fn(&Trial) -> f64| median(&trials.iter().map(f).collect::<Vec<_>>());
            others.extend(trials.iter().map(Trial::others_busy));
            let ratios: Vec<f64> = trials
                .iter()
                .zip(push)
                .map(|(a, b)| a.per_second() / b.per_second())
                .collect();
            let (ratio, target, met) = match contender {
                Contender::Push => ("1".to_owned(), String::new(), String::new()),
                Contender::Append if results.pipeline => (
                    ratio_cell(&ratios),
                    format!("≥ {TARGET:.2} × plain `$push`"),
                    verdict(median(&ratios), TARGET),
                ),
                Contender::Append => (
                    ratio_cell(&ratios),
                    "none: no update pipelines, two round trips".to_owned(),
                    String::new(),
                ),
                Contender::AppendBare => (ratio_cell(&ratios), String::new(), String::new()),
            };
            table.row(vec![
                tasks.to_string(),
                contender.label().into(),
                format!("{:.0}", m(Trial::per_second)),
                format!("{:.2}", m(Trial::round_trips)),
                format!("{:.1}", m(Trial::client_cpu_us)),
                ratio,
                target,
                met,
            ]);
        }
    }
    table.print();
    let (lo, hi) = min_max(&others);
    println!(
        "Other processes on the machine used {:.0} % of one CPU in the median trial \
         ({:.0}–{:.0} % over the trials).\n",
        median(&others) * 100.0,
        lo * 100.0,
        hi * 100.0
    );
}
