//! Part `cancel`: storms of cancelled inserts, as a service meets them (issue 18).
//!
//! Each contender gets a client of its own (a wedged pool must not spill into the next),
//! then rounds of 64 tasks: 62 inserts cancelled after 300 µs (`tokio::time::timeout`,
//! as a request timeout or a client hanging up drops a handler) and 2 normal inserts
//! with a 10 s limit. Then, after the last round, one plain `insert_one` with a 5 s limit
//! right away, 2 s and 7 s later: whether the client is still wedged.

use std::future::Future;
use std::time::{Duration, Instant};

use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::options::ReturnDocument;
use seqid::{AsDatabase, Document};

use crate::Config;
use crate::model::{Block100Doc, BoxError, CountersDoc, Make, OptimisticDoc};

const TASKS: usize = 64;
const NORMAL: usize = 2;
const CANCEL_AFTER: Duration = Duration::from_micros(300);
const NORMAL_LIMIT: Duration = Duration::from_secs(10);
const PROBE_LIMIT: Duration = Duration::from_secs(5);
const PROBES: [u64; 3] = [0, 2, 7];

#[derive(Clone, Copy, Debug)]
pub enum Contender {
    Driver,
    DriverSpawned,
    TutorialLoop,
    Tutorial,
    Counters(Route),
    Block100(Route),
    Optimistic(Route),
}

#[derive(Clone, Copy, Debug)]
pub enum Route {
    Handle,
    Bare,
}

impl Contender {
    const ALL: [Contender; 10] = [
        Contender::Driver,
        Contender::TutorialLoop,
        Contender::Tutorial,
        Contender::DriverSpawned,
        Contender::Counters(Route::Handle),
        Contender::Block100(Route::Handle),
        Contender::Optimistic(Route::Handle),
        Contender::Counters(Route::Bare),
        Contender::Block100(Route::Bare),
        Contender::Optimistic(Route::Bare),
    ];

    fn label(self) -> String {
        let route = |route: Route| match route {
            Route::Handle => "`Sequences` handle",
            Route::Bare => "bare `mongodb::Database`",
        };
        match self {
            Contender::Driver => "driver `insert_one` alone".into(),
            Contender::DriverSpawned => {
                "driver `insert_one` in `tokio::spawn` (cancelling drops the wait)".into()
            }
            Contender::TutorialLoop => "`find_one` then `insert_one` (the tutorial's loop)".into(),
            Contender::Tutorial => "`find_one_and_update` then `insert_one` (the tutorial)".into(),
            Contender::Counters(r) => format!("seqid counters, {}", route(r)),
            Contender::Block100(r) => format!("seqid block 100, {}", route(r)),
            Contender::Optimistic(r) => format!("seqid optimistic, {}", route(r)),
        }
    }
}

/// One contender's storm.
pub struct Row {
    label: String,
    normal: usize,
    timeouts: usize,
    max: Duration,
    probes: Vec<Option<Duration>>,
}

/// One insert the contender's way, `n` its number in the storm.
async fn insert(
    contender: Contender,
    db: mongodb::Database,
    shared: seqid::Database,
    n: i64,
) -> Result<(), BoxError> {
    let name = format!("c{n}");
    match contender {
        Contender::Driver => {
            plain(&db).insert_one(doc! { "n": n }).await?;
        }
        Contender::DriverSpawned => {
            let plain = plain(&db);
            tokio::spawn(async move { plain.insert_one(doc! { "n": n }).await }).await??;
        }
        Contender::TutorialLoop => {
            let docs = db.collection::<BsonDocument>("tutorial_loop");
            // The maximum `_id` plus one, retried on a duplicate key, by hand.
            for _ in 0..64 {
                let top = docs
                    .find_one(doc! {})
                    .sort(doc! { "_id": -1 })
                    .projection(doc! { "_id": 1 })
                    .await?;
                let next = top.and_then(|d| d.get_i64("_id").ok()).unwrap_or(0) + 1;
                match docs.insert_one(doc! { "_id": next, "n": n }).await {
                    Ok(_) => return Ok(()),
                    Err(e)
                        if e.to_string().contains("E11000") || e.to_string().contains("UNIQUE") => {
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            return Err("64 duplicate keys in a row".into());
        }
        Contender::Tutorial => {
            let counter = db
                .collection::<BsonDocument>("counters")
                .find_one_and_update(doc! { "_id": "cancel" }, doc! { "$inc": { "seq": 1_i64 } })
                .upsert(true)
                .return_document(ReturnDocument::After)
                .await?;
            let id = counter.and_then(|c| c.get("seq").cloned());
            db.collection::<BsonDocument>("tutorial")
                .insert_one(doc! { "_id": id, "n": n })
                .await?;
        }
        Contender::Counters(route) => {
            seqid_insert::<CountersDoc>(route, &db, &shared, &name).await?
        }
        Contender::Block100(route) => {
            seqid_insert::<Block100Doc>(route, &db, &shared, &name).await?
        }
        Contender::Optimistic(route) => {
            seqid_insert::<OptimisticDoc>(route, &db, &shared, &name).await?
        }
    }
    Ok(())
}

fn plain(db: &mongodb::Database) -> mongodb::Collection<BsonDocument> {
    db.collection("plain")
}

async fn seqid_insert<T: Document + Make>(
    route: Route,
    db: &mongodb::Database,
    shared: &seqid::Database,
    name: &str,
) -> Result<(), seqid::Error> {
    let mut doc = T::make(name, 0);
    match route {
        Route::Handle => into(&mut doc, shared).await,
        Route::Bare => into(&mut doc, db).await,
    }
}

async fn into<T: Document>(doc: &mut T, db: &impl AsDatabase) -> Result<(), seqid::Error> {
    doc.insert(db).await.map(drop)
}

async fn timed<F: Future<Output = Result<(), BoxError>>>(
    limit: Duration,
    f: F,
) -> Option<Duration> {
    let start = Instant::now();
    match tokio::time::timeout(limit, f).await {
        Ok(Ok(())) => Some(start.elapsed()),
        Ok(Err(error)) => panic!("an insert failed: {error}"),
        Err(_) => None,
    }
}

async fn storm(contender: Contender, rounds: usize) -> Result<Row, BoxError> {
    let name = "seqid_bench_cancel";
    seqid_harness::fresh_database(name).await?;
    let client = seqid_harness::client_with(|_| {}).await?;
    let db = client.database(name);
    let shared = seqid::Sequences::new(&client).database(name);
    // A string `_id` makes the optimistic maximum query bounded to numbers (nx-27017
    // orders an unfiltered sort on `_id` as text).
    for collection in ["single_optimistic", "tutorial_loop"] {
        db.collection::<BsonDocument>(collection)
            .insert_one(doc! { "_id": "text" })
            .await?;
    }
    let (mut normal, mut timeouts, mut max) = (0, 0, Duration::ZERO);
    for round in 0..rounds {
        let tasks: Vec<_> = (0..TASKS)
            .map(|i| {
                let (db, shared) = (db.clone(), shared.clone());
                let n = (round * TASKS + i) as i64;
                tokio::spawn(async move {
                    let insert = insert(contender, db, shared, n);
                    if i < TASKS - NORMAL {
                        let _ = tokio::time::timeout(CANCEL_AFTER, insert).await;
                        return None;
                    }
                    Some(timed(NORMAL_LIMIT, insert).await)
                })
            })
            .collect();
        for task in tasks {
            match task.await? {
                Some(Some(took)) => {
                    normal += 1;
                    max = max.max(took);
                }
                Some(None) => {
                    normal += 1;
                    timeouts += 1;
                    max = max.max(NORMAL_LIMIT);
                }
                None => {}
            }
        }
    }
    let start = Instant::now();
    let mut probes = Vec::new();
    for at in PROBES {
        let wait = Duration::from_secs(at).saturating_sub(start.elapsed());
        tokio::time::sleep(wait).await;
        let plain = plain(&db);
        let probe = async move {
            plain.insert_one(doc! { "probe": at as i64 }).await?;
            Ok(())
        };
        probes.push(timed(PROBE_LIMIT, probe).await);
    }
    Ok(Row {
        label: contender.label(),
        normal,
        timeouts,
        max,
        probes,
    })
}

pub async fn run(config: &Config) -> Result<Vec<Row>, BoxError> {
    let rounds = config.rounds.max(1) * 2;
    let mut rows = Vec::new();
    for contender in Contender::ALL {
        eprintln!("  {} ...", contender.label());
        rows.push(storm(contender, rounds).await?);
    }
    Ok(rows)
}

pub fn print(rows: &[Row]) {
    let yardstick = rows
        .iter()
        .find(|r| r.label.contains("tokio::spawn"))
        .map(|r| r.max);
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    println!(
        "| contender | normal inserts | timed out (10 s) | slowest | × driver in `spawn` | plain insert 0 s / 2 s / 7 s after |"
    );
    println!("|---|---|---|---|---|---|");
    for row in rows {
        let ratio = yardstick.map_or("?".into(), |y| {
            format!("{:.1}", row.max.as_secs_f64() / y.as_secs_f64())
        });
        let probes: Vec<String> = row
            .probes
            .iter()
            .map(|p| p.map_or("timed out (5 s)".into(), ms))
            .collect();
        println!(
            "| {} | {} | {} | {} | {ratio} | {} |",
            row.label,
            row.normal,
            row.timeouts,
            ms(row.max),
            probes.join(" / ")
        );
    }
    println!();
}
