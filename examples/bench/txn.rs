//! Inserts inside transactions: each insert in a transaction of its own, run with the
//! driver's `start_transaction().and_run(...)`, which runs it again after a transient
//! error (a write conflict). Contenders: a plain `insert_one` in the transaction (the
//! reference), seqid's `counters` (its `$inc` outside the transaction) and `gapless` (its
//! `$inc` inside: the process's transactions take the counter in turn, each once the one
//! before has committed). Each committed insert's time is measured too (p50, p99, max).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use mongodb::bson::{Document as BsonDocument, doc};
use seqid::{Database, Document};
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
}

impl Contender {
    const ALL: [Contender; 3] = [Contender::Plain, Contender::Counters, Contender::Gapless];

    fn name(self) -> &'static str {
        match self {
            Contender::Plain => "plain insert_one in the transaction",
            Contender::Counters => "seqid counters (`$inc` outside)",
            Contender::Gapless => "seqid gapless (`$inc` inside, in turn)",
        }
    }

    /// One insert in a transaction of its own; counts the callback's runs in `attempts`.
    async fn once(self, db: &Database, n: i32, attempts: &AtomicU64) -> Result<(), BoxError> {
        let mut session = db.client().start_session().await?;
        session
            .start_transaction()
            .and_run(db.clone(), |session, db| {
                attempts.fetch_add(1, Ordering::Relaxed);
                Box::pin(async move {
                    match self {
                        Contender::Plain => {
                            db.collection::<BsonDocument>("bench_txn_plain")
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
                            doc.insert(db).session(&mut *session).await?;
                        }
                        Contender::Gapless => {
                            let mut doc = Gapless {
                                id: 0,
                                name: "txn".into(),
                                n,
                            };
                            doc.insert(db).session(&mut *session).await?;
                        }
                    }
                    Ok(())
                })
            })
            .await?;
        Ok(())
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
    db: &Database,
    contender: Contender,
    tasks: usize,
    config: &Config,
) -> Result<Trial, BoxError> {
    let committed = Arc::new(AtomicU64::new(0));
    let attempts = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (db, committed, attempts) = (db.clone(), committed.clone(), attempts.clone());
            let trial = config.trial;
            tokio::spawn(async move {
                let mut n = 0;
                let mut latencies = Vec::new();
                while start.elapsed() < trial {
                    let began = Instant::now();
                    contender
                        .once(&db, task as i32 * 1_000_000 + n, &attempts)
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
    let mut rows = Vec::new();
    for tasks in [1, 16] {
        let mut by = Contender::ALL.map(|contender| Row {
            tasks,
            contender,
            per_sec: Vec::new(),
            retries: Vec::new(),
            ratios: Vec::new(),
            latencies: Vec::new(),
        });
        for round in 0..config.rounds {
            let mut plain = f64::NAN;
            // Rotated, so that no contender always runs first in a round.
            for k in 0..Contender::ALL.len() {
                let i = (k + round) % Contender::ALL.len();
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
                } = trial(db, Contender::ALL[i], tasks, config).await?;
                by[i].per_sec.push(per_sec);
                by[i].retries.push(retries);
                by[i].latencies.extend(latencies);
                if Contender::ALL[i] == Contender::Plain {
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
