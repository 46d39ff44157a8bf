//! Inserts inside transactions: each insert in a transaction of its own, run with seqid's
//! `Transaction::new(&mut session).run(...)` (the driver's rules: again after a transient
//! error, a write conflict). Contenders: a plain `insert_one` in the transaction (the
//! reference), seqid's `counters` (its `$inc` outside the transaction) and `gapless` (its
//! `$inc` inside: the process's transactions take the counter in turn, each once the one
//! before has committed). Each committed insert's time is measured too (p50, p99, max).
//! At 16 tasks, gapless also runs split over two ways into one process, half the tasks
//! each: two `Sequences` handles made from two clients, and two bare databases of those
//! clients (the line is the process's, whatever way a transaction came in).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use mongodb::bson::{Document as BsonDocument, doc};
use seqid::action::Transaction;
use seqid::{Database, Document, Sequences};
use serde::Serialize;

use crate::Config;
use crate::model::BoxError;
use crate::stats::{Table, median, percentile, ratio_cell};

#[derive(Serialize, Document)]
#[seq_id("bench_txn_counters", collection = "bench_txn_counters")]
struct Counted {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    n: i32,
}

#[derive(Serialize, Document)]
#[seq_id(
    "bench_txn_gapless",
    collection = "bench_txn_gapless",
    strategy = "gapless"
)]
struct Gapless {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    n: i32,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Contender {
    Plain,
    Counters,
    Gapless,
    /// Gapless, half the tasks through each of two handles made from two clients.
    GaplessTwoHandles,
    /// Gapless, half the tasks through each of two bare databases of two clients.
    GaplessTwoBare,
}

impl Contender {
    /// At one task.
    const ONE: [Contender; 3] = [Contender::Plain, Contender::Counters, Contender::Gapless];

    /// At 16 tasks.
    const MANY: [Contender; 5] = [
        Contender::Plain,
        Contender::Counters,
        Contender::Gapless,
        Contender::GaplessTwoHandles,
        Contender::GaplessTwoBare,
    ];

    fn name(self) -> &'static str {
        match self {
            Contender::Plain => "plain insert_one in the transaction",
            Contender::Counters => "seqid counters (`$inc` outside)",
            Contender::Gapless => "seqid gapless (`$inc` inside, in turn)",
            Contender::GaplessTwoHandles => "seqid gapless, half through each of two handles",
            Contender::GaplessTwoBare => "seqid gapless, half through each of two bare databases",
        }
    }

    /// The way task `task` inserts.
    fn way(self, ways: &Ways, task: usize) -> Way {
        match self {
            Contender::GaplessTwoHandles => Way::Handle(ways.handles[task % 2].clone()),
            Contender::GaplessTwoBare => Way::Bare(ways.bare[task % 2].clone()),
            _ => Way::Handle(ways.one.clone()),
        }
    }

    /// One insert in a transaction of its own; counts the callback's runs in `attempts`.
    async fn once(self, way: &Way, n: i32, attempts: &AtomicU64) -> Result<(), BoxError> {
        let mut session = way.db().client().start_session().await?;
        // Every contender through seqid's `Transaction` (the driver's rules; the plain
        // insert pays nothing for it on the wire), so that the rows differ by the insert.
        Transaction::new(&mut session)
            .run(way.clone(), |session, way| {
                attempts.fetch_add(1, Ordering::Relaxed);
                Box::pin(async move {
                    match self {
                        Contender::Plain => {
                            way.db()
                                .collection::<BsonDocument>("bench_txn_plain")
                                .insert_one(doc! { "name": "txn", "n": n })
                                .session(&mut *session)
                                .await?;
                        }
                        Contender::Counters => {
                            let mut doc = Counted {
                                id: 0,
                                name: "txn".into(),
                                n,
                            };
                            match way {
                                Way::Handle(db) => doc.insert(db).session(&mut *session).await?,
                                Way::Bare(db) => doc.insert(db).session(&mut *session).await?,
                            };
                        }
                        _ => {
                            let mut doc = Gapless {
                                id: 0,
                                name: "txn".into(),
                                n,
                            };
                            match way {
                                Way::Handle(db) => doc.insert(db).session(&mut *session).await?,
                                Way::Bare(db) => doc.insert(db).session(&mut *session).await?,
                            };
                        }
                    }
                    Ok::<_, BoxError>(())
                })
            })
            .await?;
        Ok(())
    }
}

/// The ways into the database: the benchmark's handle, and two clients of the same
/// process, each as a handle and bare.
struct Ways {
    one: Database,
    handles: [Database; 2],
    bare: [mongodb::Database; 2],
}

/// How one task inserts.
#[derive(Clone)]
enum Way {
    Handle(Database),
    Bare(mongodb::Database),
}

impl Way {
    fn db(&self) -> &mongodb::Database {
        match self {
            Way::Handle(db) => db,
            Way::Bare(db) => db,
        }
    }
}

/// What one trial measured.
struct Trial {
    per_sec: f64,
    /// Extra runs of the callback per commit.
    retries: f64,
    /// Each committed insert's time, callback runs and backoff included, in ms.
    latencies: Vec<f64>,
}

/// One trial: `tasks` tasks inserting for `config.trial`.
async fn trial(
    ways: &Ways,
    contender: Contender,
    tasks: usize,
    config: &Config,
) -> Result<Trial, BoxError> {
    let committed = Arc::new(AtomicU64::new(0));
    let attempts = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let way = contender.way(ways, task);
            let (committed, attempts) = (committed.clone(), attempts.clone());
            let trial = config.trial;
            tokio::spawn(async move {
                let mut n = 0;
                let mut latencies = Vec::new();
                while start.elapsed() < trial {
                    let began = Instant::now();
                    contender
                        .once(&way, task as i32 * 1_000_000 + n, &attempts)
                        .await?;
                    latencies.push(began.elapsed().as_secs_f64() * 1e3);
                    committed.fetch_add(1, Ordering::Relaxed);
                    n += 1;
                }
                Ok::<_, BoxError>(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for handle in handles {
        latencies.extend(handle.await??);
    }
    let secs = start.elapsed().as_secs_f64();
    let committed = committed.load(Ordering::Relaxed) as f64;
    let retries = attempts.load(Ordering::Relaxed) as f64 - committed;
    Ok(Trial {
        per_sec: committed / secs,
        retries: retries / committed,
        latencies,
    })
}

pub struct Row {
    tasks: usize,
    contender: Contender,
    per_sec: Vec<f64>,
    retries: Vec<f64>,
    ratios: Vec<f64>,
    /// Every round's committed inserts' times, in ms.
    latencies: Vec<f64>,
}

/// Interleaved rounds at 1 and 16 tasks, on fresh collections.
pub async fn run(db: &Database, config: &Config) -> Result<Option<Vec<Row>>, BoxError> {
    if seqid_harness::server_flavor()? == seqid_harness::ServerFlavor::Nx {
        // Its transactions have no isolation (writes show before the commit) and never
        // conflict: a gapless figure there would measure nothing real.
        return Ok(None);
    }
    // Two more clients of this process, nothing shared with the benchmark's.
    let clients = [
        seqid_harness::client().await?,
        seqid_harness::client().await?,
    ];
    let ways = Ways {
        one: db.clone(),
        handles: [0, 1].map(|at| Sequences::new(&clients[at]).database(db.name())),
        bare: [0, 1].map(|at| clients[at].database(db.name())),
    };
    let mut rows = Vec::new();
    for (tasks, contenders) in [(1, &Contender::ONE[..]), (16, &Contender::MANY[..])] {
        let mut by: Vec<Row> = contenders
            .iter()
            .map(|&contender| Row {
                tasks,
                contender,
                per_sec: Vec::new(),
                retries: Vec::new(),
                ratios: Vec::new(),
                latencies: Vec::new(),
            })
            .collect();
        for round in 0..config.rounds {
            let mut plain = f64::NAN;
            // Rotated, so that no contender always runs first in a round.
            for k in 0..contenders.len() {
                let i = (k + round) % contenders.len();
                for collection in ["bench_txn_plain", "bench_txn_counters", "bench_txn_gapless"] {
                    db.collection::<BsonDocument>(collection).drop().await?;
                }
                db.collection::<BsonDocument>("counters")
                    .delete_many(
                        doc! { "_id": { "$in": ["bench_txn_counters", "bench_txn_gapless"] } },
                    )
                    .await?;
                let Trial {
                    per_sec,
                    retries,
                    latencies,
                } = trial(&ways, contenders[i], tasks, config).await?;
                by[i].per_sec.push(per_sec);
                by[i].retries.push(retries);
                by[i].latencies.extend(latencies);
                if contenders[i] == Contender::Plain {
                    plain = per_sec;
                }
            }
            for row in &mut by {
                let last = *row.per_sec.last().unwrap_or(&f64::NAN);
                row.ratios.push(last / plain);
            }
        }
        rows.extend(by);
    }
    Ok(Some(rows))
}

pub fn print(rows: &Option<Vec<Row>>) {
    let Some(rows) = rows else {
        println!(
            "Not run: this server's transactions have no isolation (nx-27017 shows writes before \
             the commit and never answers a write conflict).\n"
        );
        return;
    };
    let mut table = Table::new(&[
        "tasks",
        "contender",
        "committed inserts/s",
        "× plain in a transaction",
        "callback re-runs per commit",
        "p50",
        "p99",
        "max",
    ]);
    for row in rows {
        let mut latencies = row.latencies.clone();
        latencies.sort_by(f64::total_cmp);
        table.row(vec![
            row.tasks.to_string(),
            row.contender.name().into(),
            format!("{:.0}", median(&row.per_sec)),
            ratio_cell(&row.ratios),
            format!("{:.2}", median(&row.retries)),
            ms(percentile(&latencies, 0.50)),
            ms(percentile(&latencies, 0.99)),
            ms(latencies.last().copied().unwrap_or(f64::NAN)),
        ]);
    }
    table.print();
}

fn ms(value: f64) -> String {
    format!("{value:.1} ms")
}
