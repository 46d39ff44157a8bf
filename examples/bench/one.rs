//! One task, as users run it: each contender inserts in a task of its own, through a
//! client of its own with no command monitor, in three shapes of runtime:
//!
//! - **spawned**: `tokio::spawn` on the default multi-thread runtime (a web handler);
//! - **main**: awaited directly in `#[tokio::main]`, the runtime's `block_on` thread;
//! - **current-thread**: a current-thread runtime (on a thread and a client of its own).
//!
//! The tutorial code is plain `Collection<bson::Document>` calls, as an application
//! would write it. Trials are a fixed number of inserts, contenders rotated each round;
//! every ratio is taken between trials of the same round, and its spread over rounds is
//! printed. Two contenders the library does not have send the tutorial's two commands by
//! hand with seqid's counter filter and write concern: *seqid's old guard*, the filter
//! seqid used before this benchmark existed (a four-branch `$or`), and *seqid's guard*,
//! the one it sends now. They separate what the server charges for seqid's command from
//! what seqid's client-side work costs.

use std::time::Instant;

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::options::{ReturnDocument, WriteConcern};
use seqid::{Document, Model};

use crate::Config;
use crate::model::{
    Block100Doc, BoxError, CountersDoc, Make, OptimisticBareDoc, OptimisticDoc, PlainDoc,
    TUTORIAL_COUNTERS,
};
use crate::stats::{Table, median, ratio_cell, verdict};

/// The shapes of runtime a task runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Spawned,
    Main,
    CurrentThread,
}

impl Shape {
    const ALL: [Shape; 3] = [Shape::Spawned, Shape::Main, Shape::CurrentThread];

    fn label(self) -> &'static str {
        match self {
            Shape::Spawned => "tokio::spawn, multi-thread",
            Shape::Main => "awaited in main, multi-thread",
            Shape::CurrentThread => "current-thread runtime",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contender {
    Tutorial,
    OldGuard,
    Guard,
    Counters,
    CountersBare,
    Block100,
    Optimistic,
    OptimisticBare,
    Plain,
}

impl Contender {
    const ALL: [Contender; 9] = [
        Contender::Tutorial,
        Contender::OldGuard,
        Contender::Guard,
        Contender::Counters,
        Contender::CountersBare,
        Contender::Block100,
        Contender::Optimistic,
        Contender::OptimisticBare,
        Contender::Plain,
    ];

    fn label(self) -> &'static str {
        match self {
            Contender::Tutorial => "tutorial ($inc + insert_one), by hand",
            Contender::OldGuard => "tutorial + seqid's old guard ($or), by hand",
            Contender::Guard => "tutorial + seqid's guard (one field), by hand",
            Contender::Counters => "seqid counters (handle)",
            Contender::CountersBare => "seqid counters (bare mongodb::Database)",
            Contender::Block100 => "seqid block 100 (handle)",
            Contender::Optimistic => "seqid optimistic (handle)",
            Contender::OptimisticBare => "seqid optimistic (bare mongodb::Database)",
            Contender::Plain => "plain insert_one (ObjectId)",
        }
    }

    /// The target each is held to, as a share of the tutorial's inserts/s.
    fn target(self) -> Option<f64> {
        match self {
            Contender::Counters => Some(0.97),
            _ => None,
        }
    }

    async fn insert(
        self,
        db: &mongodb::Database,
        shared: &seqid::Database,
        n: i32,
    ) -> Result<(), BoxError> {
        let name = "one task";
        match self {
            Contender::Tutorial => tutorial(db, n, Filter::Tutorial).await?,
            Contender::OldGuard => tutorial(db, n, Filter::OldGuard).await?,
            Contender::Guard => tutorial(db, n, Filter::Guard).await?,
            Contender::Counters => {
                CountersDoc::make(name, n).insert(shared).await?;
            }
            Contender::CountersBare => {
                CountersDoc::make(name, n).insert(db).await?;
            }
            Contender::Block100 => {
                Block100Doc::make(name, n).insert(shared).await?;
            }
            Contender::Optimistic => {
                OptimisticDoc::make(name, n).insert(shared).await?;
            }
            Contender::OptimisticBare => {
                OptimisticBareDoc::make(name, n).insert(db).await?;
            }
            Contender::Plain => {
                db.collection::<PlainDoc>("one_plain")
                    .insert_one(PlainDoc::make(name, n))
                    .await?;
            }
        }
        Ok(())
    }
}

/// The counter filter a by-hand contender sends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Filter {
    /// `{ _id }`, the tutorial's.
    Tutorial,
    /// `_id` and the four-branch `$or` on `seq` seqid sent before issue 12.
    OldGuard,
    /// `_id` and the one-field guard seqid sends now (`counted/counter.rs`, `guard`).
    Guard,
}

/// The tutorial's `getNextSequence` and insert, on `Collection<bson::Document>`. With
/// either guard, the counter filter is seqid's, with `w: "majority"` as seqid sends it.
async fn tutorial(db: &mongodb::Database, n: i32, filter_of: Filter) -> Result<(), BoxError> {
    let counters = db.collection::<BsonDocument>(TUTORIAL_COUNTERS);
    let (sequence, target) = match filter_of {
        Filter::Tutorial => ("one_tutorial", "one_tutorial"),
        Filter::OldGuard => ("one_old_guard", "one_old_guard"),
        Filter::Guard => ("one_guard", "one_guard"),
    };
    // The largest counter an `$inc` of 1 leaves within ±(2^53 - 1).
    const REACH: i64 = (1 << 53) - 2;
    let mut filter = doc! { "_id": sequence };
    match filter_of {
        Filter::Tutorial => {}
        Filter::OldGuard => {
            filter.insert(
                "$or",
                vec![
                    doc! { "seq": { "$exists": false } },
                    doc! { "seq": { "$type": 16 } },
                    doc! { "seq": { "$type": 18 } },
                    doc! { "seq": {
                        "$type": 1,
                        "$bitsAllClear": 0,
                        "$gte": -REACH,
                        "$lte": REACH,
                    } },
                ],
            );
        }
        Filter::Guard => {
            filter.insert(
                "seq",
                doc! { "$bitsAllClear": 0, "$gte": -REACH, "$lte": REACH },
            );
        }
    }
    let mut update = counters
        .find_one_and_update(filter, doc! { "$inc": { "seq": 1 } })
        .upsert(true)
        .return_document(ReturnDocument::After);
    if filter_of != Filter::Tutorial {
        update = update.write_concern(WriteConcern::majority());
    }
    let counter = update
        .await?
        .ok_or("the counter's upsert returned nothing")?;
    let id = match counter.get("seq") {
        Some(Bson::Int32(v)) => i64::from(*v),
        Some(Bson::Int64(v)) => *v,
        other => return Err(format!("counter seq is {other:?}").into()),
    };
    db.collection::<BsonDocument>(target)
        .insert_one(doc! { "_id": id, "name": "one task", "n": n })
        .await?;
    Ok(())
}

/// `per_second[contender][round]` for one shape.
pub struct Results {
    shape: Shape,
    per_second: Vec<Vec<f64>>,
}

/// Inserts per trial.
fn inserts(config: &Config) -> i32 {
    if config.rounds > 1 { 300 } else { 60 }
}

/// Runs every shape: the spawned and main shapes on this runtime, the current-thread one
/// on a thread of its own.
pub async fn run(database: &str, config: &Config) -> Result<Vec<Results>, BoxError> {
    let mut all = Vec::new();
    for shape in Shape::ALL {
        let results = match shape {
            Shape::CurrentThread => {
                let (database, rounds, per) = (database.to_owned(), config.rounds, inserts(config));
                tokio::task::spawn_blocking(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()?;
                    runtime.block_on(rounds_of(shape, &database, rounds, per))
                })
                .await??
            }
            _ => rounds_of(shape, database, config.rounds, inserts(config)).await?,
        };
        all.push(results);
    }
    Ok(all)
}

/// Interleaved rounds of one trial per contender, rotated, on a client of this runtime.
async fn rounds_of(
    shape: Shape,
    database: &str,
    rounds: usize,
    per: i32,
) -> Result<Results, BoxError> {
    // No command monitor: an application has none.
    let client = seqid_harness::client().await?;
    let db = client.database(database);
    let shared = seqid::Sequences::new(&client).database(database);
    // Fresh collections for each shape: SecantusDB slows as data accumulates, and a new
    // handle's first maximum query on nx-27017, which sorts `_id` as text, would find an
    // old id below the largest.
    drop_collections(&db).await?;
    // Warm-up: creates collections and counters, opens connections.
    for contender in Contender::ALL {
        for n in 0..10 {
            contender.insert(&db, &shared, n).await?;
        }
    }
    let mut per_second = vec![Vec::new(); Contender::ALL.len()];
    for round in 0..rounds {
        for k in 0..Contender::ALL.len() {
            let at = (k + round) % Contender::ALL.len();
            let contender = Contender::ALL[at];
            let (db, shared) = (db.clone(), shared.clone());
            let trial = async move {
                let start = Instant::now();
                for n in 0..per {
                    contender.insert(&db, &shared, n).await?;
                }
                Ok::<f64, BoxError>(f64::from(per) / start.elapsed().as_secs_f64())
            };
            let rate = match shape {
                Shape::Spawned => tokio::spawn(trial).await??,
                Shape::Main | Shape::CurrentThread => trial.await?,
            };
            per_second[at].push(rate);
        }
    }
    // Nor is anything left for the other parts of the benchmark.
    drop_collections(&db).await?;
    Ok(Results { shape, per_second })
}

async fn drop_collections(db: &mongodb::Database) -> Result<(), BoxError> {
    for collection in [
        "one_tutorial",
        "one_old_guard",
        "one_guard",
        "one_plain",
        CountersDoc::SEQUENCE.collection,
        Block100Doc::SEQUENCE.collection,
        OptimisticDoc::SEQUENCE.collection,
        OptimisticBareDoc::SEQUENCE.collection,
    ] {
        db.collection::<BsonDocument>(collection).drop().await?;
    }
    Ok(())
}

pub fn print(all: &[Results]) {
    let mut table = Table::new(&[
        "runtime",
        "contender",
        "inserts/s",
        "× tutorial (min–max)",
        "target",
        "met?",
    ]);
    for results in all {
        let tutorial = &results.per_second[0];
        for (at, contender) in Contender::ALL.iter().enumerate() {
            let ratios: Vec<f64> = results.per_second[at]
                .iter()
                .zip(tutorial)
                .map(|(rate, base)| rate / base)
                .collect();
            let (target, met) = match contender.target() {
                Some(t) => (format!("≥ {t:.2} × tutorial"), verdict(median(&ratios), t)),
                None => (String::new(), String::new()),
            };
            table.row(vec![
                results.shape.label().into(),
                contender.label().into(),
                format!("{:.0}", median(&results.per_second[at])),
                ratio_cell(&ratios),
                target,
                met,
            ]);
        }
    }
    table.print();
}
