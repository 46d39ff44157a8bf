//! The optimistic loop's maximum query on collections of 1,000 and 50,000 numeric ids:
//! the unfiltered `find({}).sort({_id: -1}).limit(1)` it uses first, the bounded
//! `find({_id: {$lte: Infinity}}).sort({_id: -1}).limit(1)` it uses once it has seen a
//! non-numeric `_id`, what each returns, and an optimistic `insert` on each collection.

use std::time::{Duration, Instant};

use mongodb::Collection;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::Database;
use seqid::Document;

use crate::Config;
use crate::model::{BoxError, Make, MaxQuery1k, MaxQuery50k};
use crate::probe::Monitor;
use crate::stats::{Table, median};

/// At most this long is spent on one query shape at one size (at least 5 runs).
const QUERY_BUDGET: Duration = Duration::from_secs(12);
const FILL_CHUNK: usize = 10_000;

pub struct QueryRow {
    size: usize,
    query: &'static str,
    runs: usize,
    median_us: f64,
    max_us: f64,
    returns: String,
}

pub struct InsertRow {
    size: usize,
    runs: usize,
    median_us: f64,
    round_trips: f64,
    retries: u64,
}

pub struct MaxQueryResults {
    queries: Vec<QueryRow>,
    inserts: Vec<InsertRow>,
}

/// Fills the collection with ids `1..=size` through the optimistic type itself (so this
/// process knows its own largest id, as a writer that filled it would).
async fn fill<T: Document + Make>(db: &Database, size: usize) -> Result<(), BoxError> {
    db.collection::<BsonDocument>(T::SEQUENCE.collection)
        .drop()
        .await?;
    let mut done = 0;
    while done < size {
        let chunk = FILL_CHUNK.min(size - done);
        let mut docs: Vec<T> = (0..chunk)
            .map(|i| T::make("fill", (done + i) as i32))
            .collect();
        T::insert_many(&mut docs, db).await?;
        done += chunk;
    }
    Ok(())
}

fn show(top: Option<BsonDocument>) -> String {
    match top.as_ref().and_then(|d| d.get("_id")) {
        Some(Bson::Int32(v)) => format!("_id {v} (Int32)"),
        Some(Bson::Int64(v)) => format!("_id {v} (Int64)"),
        Some(other) => format!("_id {other}"),
        None => "nothing".into(),
    }
}

async fn time_query(
    collection: &Collection<BsonDocument>,
    filter: BsonDocument,
    runs: usize,
) -> Result<(usize, f64, f64, String), BoxError> {
    let mut times = Vec::new();
    let mut returns = String::new();
    let budget = Instant::now() + QUERY_BUDGET;
    while times.len() < runs && (times.len() < 5 || Instant::now() < budget) {
        let start = Instant::now();
        let top = collection
            .find_one(filter.clone())
            .sort(doc! { "_id": -1 })
            .projection(doc! { "_id": 1 })
            .await?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
        returns = show(top);
    }
    let max = times.iter().copied().fold(0.0, f64::max);
    Ok((times.len(), median(&times), max, returns))
}

async fn measure<T: Document + Make>(
    db: &Database,
    monitor: &Monitor,
    size: usize,
    config: &Config,
    out: &mut MaxQueryResults,
) -> Result<(), BoxError> {
    fill::<T>(db, size).await?;
    let collection = db.collection::<BsonDocument>(T::SEQUENCE.collection);
    let stored = collection.estimated_document_count().await?;
    assert_eq!(stored, size as u64);
    for (query, filter) in [
        ("find({}).sort({_id: -1}).limit(1)", doc! {}),
        (
            "find({_id: {$lte: Infinity}}).sort({_id: -1}).limit(1)",
            doc! { "_id": { "$lte": f64::INFINITY } },
        ),
    ] {
        let (runs, median_us, max_us, returns) =
            time_query(&collection, filter, config.maxq_runs).await?;
        out.queries.push(QueryRow {
            size,
            query,
            runs,
            median_us,
            max_us,
            returns: format!("{returns} (largest stored: {size})"),
        });
    }
    let retries_before = T::sequence().stats(db).retries;
    let commands_before = monitor.counter.total();
    let mut times = Vec::new();
    for n in 0..config.maxq_inserts {
        let start = Instant::now();
        T::make("latency", n as i32).insert(db).await?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    out.inserts.push(InsertRow {
        size,
        runs: times.len(),
        median_us: median(&times),
        round_trips: (monitor.counter.total() - commands_before) as f64 / times.len() as f64,
        retries: T::sequence().stats(db).retries - retries_before,
    });
    collection.drop().await?;
    Ok(())
}

pub async fn run(
    db: &Database,
    monitor: &Monitor,
    config: &Config,
) -> Result<MaxQueryResults, BoxError> {
    let mut out = MaxQueryResults {
        queries: Vec::new(),
        inserts: Vec::new(),
    };
    measure::<MaxQuery1k>(db, monitor, 1_000, config, &mut out).await?;
    eprintln!("  maximum query at 1,000 documents done");
    measure::<MaxQuery50k>(db, monitor, 50_000, config, &mut out).await?;
    eprintln!("  maximum query at 50,000 documents done");
    Ok(out)
}

pub fn print(results: &MaxQueryResults) {
    let mut table = Table::new(&[
        "documents",
        "query",
        "runs",
        "median µs",
        "max µs",
        "returns",
    ]);
    for q in &results.queries {
        table.row(vec![
            q.size.to_string(),
            format!("`{}`", q.query),
            q.runs.to_string(),
            format!("{:.0}", q.median_us),
            format!("{:.0}", q.max_us),
            q.returns.clone(),
        ]);
    }
    table.print();
    let mut table = Table::new(&[
        "documents",
        "optimistic inserts (1 task)",
        "median µs/insert",
        "round trips/insert",
        "retries",
    ]);
    for i in &results.inserts {
        table.row(vec![
            i.size.to_string(),
            i.runs.to_string(),
            format!("{:.0}", i.median_us),
            format!("{:.2}", i.round_trips),
            i.retries.to_string(),
        ]);
    }
    table.print();
}
