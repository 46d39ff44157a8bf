//! Uncoordinated optimistic writers (`--only contention`): 1, 4 and 16 writers insert
//! into one collection with `strategy = "optimistic"` and the type's defaults, while
//! another OS process runs the MongoDB tutorial's loop by hand on the same collection.
//! The writers are tasks inserting through a bare `mongodb::Database` (which shares
//! nothing between calls), or OS processes with a `Sequences` handle each (which shares
//! nothing between processes). Inserts per second, latency of each insert (p50, p99,
//! max), and inserts that failed.
//!
//! The same file runs against an earlier seqid to compare loops: it uses only
//! `insert(&db)` and the derive's defaults.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use seqid::Document;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;

use crate::Config;
use crate::model::BoxError;
use crate::stats::Table;

/// The argument that makes the benchmark a child writer of this part.
pub const CHILD: &str = "--contention-child";

const COLLECTION: &str = "contention";
const WRITERS: [usize; 3] = [1, 4, 16];

#[derive(Debug, Clone, Serialize, Deserialize, Document)]
#[seq_id("bench_contention", collection = "contention", strategy = "optimistic")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
    writer: String,
    n: i32,
}

/// What the writers of one trial did.
pub struct Row {
    writers: usize,
    via: &'static str,
    /// Each successful insert's latency.
    latencies: Vec<Duration>,
    failures: usize,
    first_failure: Option<String>,
    wall: Duration,
    tutorial: u64,
    /// Documents in the collection afterwards, and whether their ids were distinct and
    /// as many as the inserts acknowledged.
    stored: u64,
}

/// Each writer's inserts.
fn per_writer(config: &Config) -> usize {
    if config.rounds > 1 { 40 } else { 10 }
}

pub async fn run(database: &str, config: &Config) -> Result<Vec<Row>, BoxError> {
    let client = seqid_harness::client().await?;
    let db = client.database(database);
    let uri = seqid_harness::server_uri()?;
    let mut rows = Vec::new();
    for via in ["tasks, bare", "processes, a handle each"] {
        for writers in WRITERS {
            let coll = db.collection::<BsonDocument>(COLLECTION);
            coll.drop().await?;
            db.create_collection(COLLECTION).await?;
            let mut tutorial = child(&uri, database, "tutorial", 0)?;
            // The tutorial's loop is under way before the writers start.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let start = Instant::now();
            let (latencies, failures) = match via {
                "tasks, bare" => bare_tasks(&db, writers, per_writer(config)).await?,
                _ => processes(&uri, database, writers, per_writer(config)).await?,
            };
            let wall = start.elapsed();
            drop(tutorial.stdin.take());
            let mut out = String::new();
            tutorial
                .stdout
                .take()
                .expect("piped")
                .read_to_string(&mut out)
                .await?;
            tutorial.wait().await?;
            let tutorial_count = out.trim().parse::<u64>().unwrap_or(0);
            let stored = coll.count_documents(doc! {}).await?;
            let expected = latencies.len() as u64 + tutorial_count;
            if stored != expected {
                return Err(format!(
                    "{via}, {writers} writers: {stored} documents stored, {expected} acknowledged"
                )
                .into());
            }
            rows.push(Row {
                writers,
                via,
                first_failure: failures.first().cloned(),
                failures: failures.len(),
                latencies,
                wall,
                tutorial: tutorial_count,
                stored,
            });
        }
    }
    Ok(rows)
}

/// `writers` tasks of this process insert `each` tickets through a bare database.
async fn bare_tasks(
    db: &mongodb::Database,
    writers: usize,
    each: usize,
) -> Result<(Vec<Duration>, Vec<String>), BoxError> {
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let db = db.clone();
            tokio::spawn(async move { write(&db, &format!("task-{w}"), each).await })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut failures = Vec::new();
    for task in tasks {
        let (l, f) = task.await?;
        latencies.extend(l);
        failures.extend(f);
    }
    Ok((latencies, failures))
}

/// Inserts `each` tickets one after the other through `db`: each latency, each failure.
async fn write<D: seqid::AsDatabase>(
    db: &D,
    writer: &str,
    each: usize,
) -> (Vec<Duration>, Vec<String>) {
    let mut latencies = Vec::new();
    let mut failures = Vec::new();
    for n in 0..each {
        let mut ticket = Ticket {
            id: 0,
            writer: writer.to_owned(),
            n: n as i32,
        };
        let start = Instant::now();
        match ticket.insert(db).await {
            Ok(_) => latencies.push(start.elapsed()),
            Err(error) => failures.push(error.to_string()),
        }
    }
    (latencies, failures)
}

/// `writers` OS processes, each with a handle of its own, insert `each` tickets.
async fn processes(
    uri: &str,
    database: &str,
    writers: usize,
    each: usize,
) -> Result<(Vec<Duration>, Vec<String>), BoxError> {
    let mut children = (0..writers)
        .map(|_| child(uri, database, "handle", each))
        .collect::<Result<Vec<_>, _>>()?;
    let mut latencies = Vec::new();
    let mut failures = Vec::new();
    for child in &mut children {
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        while let Some(line) = lines.next_line().await? {
            match line.split_once(' ') {
                Some(("ok", micros)) => latencies.push(Duration::from_micros(micros.parse()?)),
                Some(("failed", error)) => failures.push(error.to_owned()),
                _ => return Err(format!("a writer said {line:?}").into()),
            }
        }
        let status = child.wait().await?;
        if !status.success() {
            return Err(format!("a writer process ended with {status}").into());
        }
    }
    Ok((latencies, failures))
}

/// Starts this benchmark as a child writer: `handle` inserts `count` tickets through a
/// handle of its own; `tutorial` runs the tutorial's loop until its stdin closes.
fn child(
    uri: &str,
    database: &str,
    mode: &str,
    count: usize,
) -> Result<tokio::process::Child, BoxError> {
    Ok(Command::new(std::env::current_exe()?)
        .args([CHILD, mode, database, &count.to_string()])
        .env("MONGODB_URI", uri)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?)
}

/// The child's side: `args` are what [`child`] passed after [`CHILD`].
pub async fn child_main(args: &[String]) -> Result<(), BoxError> {
    let [mode, database, count] = args else {
        return Err(format!("{CHILD} MODE DATABASE COUNT, not {args:?}").into());
    };
    let client = seqid_harness::client().await?;
    match mode.as_str() {
        "handle" => {
            let db = seqid::Sequences::new(&client).database(database);
            let writer = format!("process-{}", std::process::id());
            let (latencies, failures) = write(&db, &writer, count.parse()?).await;
            for latency in latencies {
                println!("ok {}", latency.as_micros());
            }
            for failure in failures {
                println!("failed {}", failure.replace('\n', " "));
            }
        }
        "tutorial" => {
            let db = client.database(database);
            // Told to stop by its stdin closing; it stops between inserts, so that every
            // insert it sent is counted.
            let stop = Arc::new(AtomicBool::new(false));
            let told = Arc::clone(&stop);
            tokio::spawn(async move {
                let mut buf = [0u8; 1];
                let _ = tokio::io::stdin().read(&mut buf).await;
                told.store(true, Ordering::Relaxed);
            });
            let mut stored = 0u64;
            while !stop.load(Ordering::Relaxed) {
                tutorial_insert(&db, stored).await?;
                stored += 1;
            }
            println!("{stored}");
        }
        other => return Err(format!("unknown child mode {other:?}").into()),
    }
    Ok(())
}

/// One document by the tutorial's loop, by hand: the largest numeric `_id` plus one, and
/// on a duplicate key the same again, without end. The query is bounded to numbers
/// (nx-27017 orders an unfiltered sort on `_id` as text).
async fn tutorial_insert(db: &mongodb::Database, n: u64) -> Result<(), BoxError> {
    let coll = db.collection::<BsonDocument>(COLLECTION);
    loop {
        let top = coll
            .find_one(doc! { "_id": { "$lte": f64::INFINITY } })
            .sort(doc! { "_id": -1 })
            .projection(doc! { "_id": 1 })
            .await?;
        let next = match top.as_ref().and_then(|top| top.get("_id")) {
            Some(Bson::Int32(v)) => i64::from(*v) + 1,
            Some(Bson::Int64(v)) => v + 1,
            Some(Bson::Double(v)) => *v as i64 + 1,
            _ => 1,
        };
        let ticket = doc! { "_id": next, "writer": "tutorial", "n": n as i64 };
        match coll.insert_one(ticket).await {
            Ok(_) => return Ok(()),
            Err(error)
                if matches!(&*error.kind,
                    ErrorKind::Write(WriteFailure::WriteError(e)) if e.code == 11000) => {}
            Err(error) => return Err(error.into()),
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn print(rows: &[Row]) {
    let mut table = Table::new(&[
        "writers",
        "as",
        "inserts",
        "failed",
        "inserts/s",
        "p50 ms",
        "p99 ms",
        "max ms",
        "tutorial's inserts",
        "stored",
    ]);
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
    for row in rows {
        let mut sorted = row.latencies.clone();
        sorted.sort();
        table.row(vec![
            row.writers.to_string(),
            row.via.to_string(),
            row.latencies.len().to_string(),
            row.failures.to_string(),
            format!("{:.0}", row.latencies.len() as f64 / row.wall.as_secs_f64()),
            ms(percentile(&sorted, 50.0)),
            ms(percentile(&sorted, 99.0)),
            ms(sorted.last().copied().unwrap_or_default()),
            row.tutorial.to_string(),
            row.stored.to_string(),
        ]);
    }
    table.print();
    for row in rows.iter().filter(|row| row.failures > 0) {
        println!(
            "\n{} writers, {}: first failure: {}",
            row.writers,
            row.via,
            row.first_failure.as_deref().unwrap_or("?")
        );
    }
    println!();
}
