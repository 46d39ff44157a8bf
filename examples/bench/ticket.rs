//! Part `ticket`: where the example service's ticket spends its time (issue 40, the
//! profile behind `× ObjectId` in `--only service`). The service's three ways to store a
//! ticket, without HTTP: 16 tasks insert tickets (8 projects) for a fixed time, each way
//! into a collection of its own, rounds rotated, every round on empty collections:
//!
//! - **ObjectId**: the service's `objectid` mode, [`PlainTicket`] with `insert_one`, no
//!   number and no index but `_id`'s;
//! - **ObjectId + number index**: the same document with a `number` taken from a counter
//!   in this process (no round trip), into a collection with the service's unique
//!   `{ project, number }` index: what the server charges for a number a ticket can be
//!   found by, with nothing of seqid;
//! - **seqid**: the service's own [`Ticket`], block strategy, through the handle.
//!
//! Every trial runs on a server of its own (the `MONGODB_URI` server, if one is set, with
//! a fresh database), as `--only service`'s rounds do: SecantusDB slows as its data and its
//! retryable-write records accumulate, which would make the later trials' figures the
//! server's. Each trial begins with a quarter of its length not counted (connections, the
//! handle's first blocks).
//!
//! Per insert: commands sent, this process's CPU time (the client: driver and seqid), the
//! server's CPU time, and the latency. The step from the first row to the second is the
//! server's; from the second to the third, seqid's.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use mongodb::IndexModel;
use mongodb::bson::oid::ObjectId;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::options::IndexOptions;
use seqid::Document;

use crate::Config;
use crate::app::{PLAIN_TICKETS, PlainTicket, Ticket};
use crate::model::BoxError;
use crate::probe::{Monitor, Snapshot};
use crate::stats::{Table, median, percentile, ratio_cell};

/// Tasks inserting at once, and the projects their tickets go to (as `--only service`).
const TASKS: usize = 16;
const PROJECTS: usize = 8;

/// The collection of the tickets numbered in this process.
const INDEXED_TICKETS: &str = "indexed_tickets";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Contender {
    ObjectId,
    Indexed,
    Seqid,
}

impl Contender {
    const ALL: [Contender; 3] = [Contender::ObjectId, Contender::Indexed, Contender::Seqid];

    fn label(self) -> &'static str {
        match self {
            Contender::ObjectId => "ObjectId ticket, insert_one (the service's objectid mode)",
            Contender::Indexed => "ObjectId ticket + number (in-process) + unique index",
            Contender::Seqid => "seqid ticket, block, handle (the service's seqid mode)",
        }
    }
}

/// One trial's figures.
struct Trial {
    inserts: u64,
    elapsed: Duration,
    usage: Snapshot,
    latencies_ms: Vec<f64>,
}

/// Numbers for the `Indexed` contender, per project, from the service's start (1000).
#[derive(Default)]
struct Numbers(HashMap<String, AtomicI64>);

impl Numbers {
    fn new() -> Numbers {
        Numbers(
            (0..PROJECTS)
                .map(|p| (project(p), AtomicI64::new(1000)))
                .collect(),
        )
    }

    fn next(&self, project: &str) -> i64 {
        self.0[project].fetch_add(1, Ordering::Relaxed)
    }
}

fn project(p: usize) -> String {
    format!("project-{p}")
}

/// One ticket of `contender`, stored.
async fn insert(
    db: &seqid::Database,
    numbers: &Numbers,
    contender: Contender,
    task: usize,
    n: u64,
) -> Result<(), BoxError> {
    let project = project((task + n as usize) % PROJECTS);
    let title = "The printer is on fire".to_owned();
    let request = format!("{task}-{n}-{}", ObjectId::new());
    match contender {
        Contender::ObjectId => {
            let ticket = PlainTicket {
                id: ObjectId::new(),
                project: Bson::String(project),
                title,
                request,
            };
            db.collection::<PlainTicket>(PLAIN_TICKETS)
                .insert_one(&ticket)
                .await?;
        }
        Contender::Indexed => {
            let ticket = doc! {
                "_id": ObjectId::new(),
                "number": numbers.next(&project),
                "project": project,
                "title": title,
                "request": request,
            };
            db.collection::<BsonDocument>(INDEXED_TICKETS)
                .insert_one(ticket)
                .await?;
        }
        Contender::Seqid => {
            let mut ticket = Ticket {
                id: None,
                project: Bson::String(project),
                number: 0,
                title,
                request,
            };
            ticket.insert(db).await?;
        }
    }
    Ok(())
}

async fn trial(
    db: &seqid::Database,
    monitor: &Monitor,
    server_pid: Option<u32>,
    contender: Contender,
    numbers: &Arc<Numbers>,
    length: Duration,
) -> Result<Trial, BoxError> {
    let before = monitor.snapshot(server_pid);
    let started = Instant::now();
    let deadline = started + length;
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (db, numbers) = (db.clone(), Arc::clone(numbers));
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut n = 0;
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    insert(&db, &numbers, contender, task, n).await?;
                    latencies.push(sent.elapsed().as_secs_f64() * 1e3);
                    n += 1;
                }
                Ok::<_, BoxError>(latencies)
            })
        })
        .collect();
    let mut latencies_ms = Vec::new();
    for task in tasks {
        latencies_ms.extend(task.await??);
    }
    let elapsed = started.elapsed();
    let usage = before.delta(&monitor.snapshot(server_pid));
    Ok(Trial {
        inserts: latencies_ms.len() as u64,
        elapsed,
        usage,
        latencies_ms,
    })
}

/// A fresh server, and a client of it whose commands `monitor` counts; the database,
/// through a handle of that client, with the service's indexes, and the server's pid.
async fn fresh(
    monitor: &Arc<Monitor>,
) -> Result<(seqid_harness::TestServer, seqid::Database, Option<u32>), BoxError> {
    let server = seqid_harness::TestServer::start().await?;
    let mut options = mongodb::options::ClientOptions::parse(server.uri()).await?;
    options.command_event_handler = Some(monitor.handler());
    let client = mongodb::Client::with_options(options)?;
    let db = seqid::Sequences::new(&client).database("seqid_bench_ticket");
    db.drop().await?;
    Ticket::create_indexes(&db).await?;
    let unique = IndexModel::builder()
        .keys(doc! { "project": 1, "number": 1 })
        .options(IndexOptions::builder().unique(true).build())
        .build();
    db.collection::<BsonDocument>(INDEXED_TICKETS)
        .create_index(unique)
        .await?;
    let pid = crate::probe::server_pid(&db).await;
    Ok((server, db, pid))
}

/// One contender over every round.
pub struct Row {
    contender: Contender,
    per_second: Vec<f64>,
    /// Per round, this contender's inserts/s over the ObjectId contender's.
    over_object_id: Vec<f64>,
    latencies_ms: Vec<f64>,
    inserts: u64,
    commands: u64,
    client_cpu: Option<Duration>,
    server_cpu: Option<Duration>,
}

pub async fn run(monitor: &Arc<Monitor>, config: &Config) -> Result<Vec<Row>, BoxError> {
    let mut rows: Vec<Row> = Contender::ALL
        .iter()
        .map(|&contender| Row {
            contender,
            per_second: Vec::new(),
            over_object_id: Vec::new(),
            latencies_ms: Vec::new(),
            inserts: 0,
            commands: 0,
            client_cpu: Some(Duration::ZERO),
            server_cpu: Some(Duration::ZERO),
        })
        .collect();
    let length = config.trial.max(Duration::from_secs(1));
    for round in 0..config.rounds {
        let mut order = Contender::ALL;
        order.rotate_left(round % Contender::ALL.len());
        let mut this_round = HashMap::new();
        for contender in order {
            let (server, db, pid) = fresh(monitor).await?;
            let numbers = Arc::new(Numbers::new());
            trial(&db, monitor, pid, contender, &numbers, length / 4).await?;
            let t = trial(&db, monitor, pid, contender, &numbers, length).await?;
            drop(server);
            this_round.insert(contender, t.inserts as f64 / t.elapsed.as_secs_f64());
            let row = rows
                .iter_mut()
                .find(|row| row.contender == contender)
                .expect("a row per contender");
            row.per_second
                .push(t.inserts as f64 / t.elapsed.as_secs_f64());
            row.latencies_ms.extend(t.latencies_ms);
            row.inserts += t.inserts;
            row.commands += t.usage.commands;
            row.client_cpu = row.client_cpu.zip(t.usage.client_cpu).map(|(a, b)| a + b);
            row.server_cpu = row.server_cpu.zip(t.usage.server_cpu).map(|(a, b)| a + b);
        }
        let yardstick = this_round[&Contender::ObjectId];
        for row in &mut rows {
            row.over_object_id
                .push(this_round[&row.contender] / yardstick);
        }
    }
    for row in &mut rows {
        row.latencies_ms.sort_by(f64::total_cmp);
    }
    Ok(rows)
}

pub fn print(rows: &[Row]) {
    let mut table = Table::new(&[
        "ticket",
        "inserts/s",
        "× ObjectId",
        "p50",
        "p99",
        "commands / insert",
        "client CPU / insert",
        "server CPU / insert",
    ]);
    let per_insert = |cpu: Option<Duration>, inserts: u64| {
        cpu.map_or("–".into(), |cpu| {
            format!("{:.0} µs", cpu.as_secs_f64() * 1e6 / inserts.max(1) as f64)
        })
    };
    for row in rows {
        table.row(vec![
            row.contender.label().into(),
            format!("{:.0}", median(&row.per_second)),
            ratio_cell(&row.over_object_id),
            format!("{:.1} ms", percentile(&row.latencies_ms, 0.50)),
            format!("{:.1} ms", percentile(&row.latencies_ms, 0.99)),
            format!("{:.3}", row.commands as f64 / row.inserts.max(1) as f64),
            per_insert(row.client_cpu, row.inserts),
            per_insert(row.server_cpu, row.inserts),
        ]);
    }
    table.print();
}
