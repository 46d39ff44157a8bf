//! Scoped sequences: the block strategy numbering per project with 1, 100 and 10,000
//! projects in use, through one handle. Round trips per insert (the reservations grow with
//! the projects: one block each), inserts per second, and the heap the handle's state
//! holds once the inserts are done (one allocator and live block per project).

use std::time::Instant;

use mongodb::bson::Document as BsonDocument;
use seqid::{Document, Model};
use serde::{Deserialize, Serialize};

use crate::Config;
use crate::cost::heap_in_use;
use crate::model::BoxError;
use crate::probe::Monitor;
use crate::stats::Table;

/// Numbered per project in blocks of 100.
#[derive(Debug, Clone, Serialize, Deserialize, Document)]
#[seq_id(collection = "scoped_tickets")]
struct Ticket {
    project: String,
    #[seq_id(
        "bench_scoped",
        scope = "project",
        strategy = "block",
        block_size = 100
    )]
    number: i64,
    n: i32,
}

pub struct Row {
    scopes: usize,
    inserts: usize,
    per_second: f64,
    round_trips: f64,
    reservations: u64,
    held: usize,
    heap_bytes: i64,
}

const SCOPES: [usize; 3] = [1, 100, 10_000];

pub async fn run(
    database: &str,
    monitor: &std::sync::Arc<Monitor>,
    config: &Config,
) -> Result<Vec<Row>, BoxError> {
    let client =
        seqid_harness::client_with(|o| o.command_event_handler = Some(monitor.handler())).await?;
    let tasks = 16;
    let inserts = if config.rounds > 1 { 20_000 } else { 2_000 };
    let mut rows = Vec::new();
    let mut warm = false;
    // A first trial, not recorded, so that the connections the tasks need are open before
    // the heap is measured.
    for scopes in std::iter::once(1).chain(SCOPES) {
        client
            .database(database)
            .collection::<BsonDocument>(Ticket::SEQUENCE.collection)
            .drop()
            .await?;
        let heap_before = heap_in_use() as i64;
        // A handle of its own, whose state is what this trial adds.
        let sequences = seqid::Sequences::new(&client);
        let db = sequences.database(database);
        let before = monitor.snapshot(None);
        let start = Instant::now();
        let handles: Vec<_> = (0..tasks)
            .map(|task| {
                let db = db.clone();
                tokio::spawn(async move {
                    for i in (task..inserts).step_by(tasks) {
                        let mut ticket = Ticket {
                            project: format!("p{}", i % scopes),
                            number: 0,
                            n: i as i32,
                        };
                        ticket.insert(&db).await?;
                    }
                    Ok::<(), BoxError>(())
                })
            })
            .collect();
        for handle in handles {
            handle.await??;
        }
        let elapsed = start.elapsed();
        let usage = before.delta(&monitor.snapshot(None));
        let heap_bytes = heap_in_use() as i64 - heap_before;
        if !warm {
            warm = true;
            continue;
        }
        rows.push(Row {
            scopes,
            inserts,
            per_second: inserts as f64 / elapsed.as_secs_f64(),
            round_trips: usage.commands as f64 / inserts as f64,
            reservations: Ticket::sequence().stats(&db).reservations,
            held: sequences.held(),
            heap_bytes,
        });
        drop(db);
        drop(sequences);
    }
    client
        .database(database)
        .collection::<BsonDocument>(Ticket::SEQUENCE.collection)
        .drop()
        .await?;
    Ok(rows)
}

pub fn print(rows: &[Row]) {
    let mut table = Table::new(&[
        "projects",
        "inserts",
        "inserts/s",
        "round trips/insert",
        "reservations",
        "live blocks held",
        "heap held after, bytes (per block)",
    ]);
    for row in rows {
        table.row(vec![
            row.scopes.to_string(),
            row.inserts.to_string(),
            format!("{:.0}", row.per_second),
            format!("{:.3}", row.round_trips),
            row.reservations.to_string(),
            row.held.to_string(),
            format!(
                "{} ({:.0})",
                row.heap_bytes,
                row.heap_bytes as f64 / row.held.max(1) as f64
            ),
        ]);
    }
    table.print();
}
