//! Part `bare`: the optimistic strategy's insert through a bare `mongodb::Database`, step
//! by step, beside the same through a `Sequences` handle (issue 40): each command it sends
//! per insert, counted by the client's command monitor with its mean time, at 1 task and
//! at 16. A bare call keeps nothing between calls, so each insert reads the largest id
//! stored (a `find` sorted on `_id`, bounded below by the last id the call knows of) before
//! its `insert`; a handle's frontier knows it, and sends the `insert` alone.
//!
//! Each trial starts on an empty collection and inserts a fixed number of documents: the
//! maximum query's cost may grow with the collection (SecantusDB and nx-27017 answer it
//! with a scan, MongoDB with one index entry), so the documents stored at the end are
//! shown.

use std::sync::Arc;
use std::time::Instant;

use seqid::{Document, Model};

use crate::Config;
use crate::model::{BoxError, Make, OptimisticBareDoc, OptimisticDoc};
use crate::probe::Monitor;
use crate::stats::{Table, median};

/// The task counts, and the inserts of each trial at each.
const TASKS: [usize; 2] = [1, 16];
const INSERTS: usize = 480;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Handle,
    Bare,
}

impl Route {
    fn label(self) -> &'static str {
        match self {
            Route::Handle => "handle (`Sequences`)",
            Route::Bare => "bare `mongodb::Database`",
        }
    }

    fn collection(self) -> &'static str {
        match self {
            Route::Handle => OptimisticDoc::SEQUENCE.collection,
            Route::Bare => OptimisticBareDoc::SEQUENCE.collection,
        }
    }
}

pub struct Row {
    tasks: usize,
    route: Route,
    /// Per round: mean time per insert as one task sees it, in ms.
    per_insert_ms: Vec<f64>,
    per_second: Vec<f64>,
    commands_per_insert: f64,
    /// The last round's commands by name, with their mean time.
    steps: String,
}

async fn trial(
    db: &seqid::Database,
    monitor: &Monitor,
    route: Route,
    tasks: usize,
) -> Result<(f64, f64, u64, String), BoxError> {
    db.collection::<mongodb::bson::Document>(route.collection())
        .drop()
        .await?;
    let before = monitor.snapshot(None);
    let started = Instant::now();
    let per_task = INSERTS / tasks;
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let db = db.clone();
            tokio::spawn(async move {
                let bare: mongodb::Database = (*db).clone();
                let mut spent = 0.0;
                for n in 0..per_task {
                    let name = format!("bare-{task}");
                    let sent = Instant::now();
                    match route {
                        Route::Handle => {
                            OptimisticDoc::make(&name, n as i32).insert(&db).await?;
                        }
                        Route::Bare => {
                            OptimisticBareDoc::make(&name, n as i32)
                                .insert(&bare)
                                .await?;
                        }
                    }
                    spent += sent.elapsed().as_secs_f64() * 1e3;
                }
                Ok::<_, BoxError>(spent / per_task as f64)
            })
        })
        .collect();
    let mut means = Vec::new();
    for handle in handles {
        means.push(handle.await??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let usage = before.delta(&monitor.snapshot(None));
    let inserts = (per_task * tasks) as f64;
    Ok((
        median(&means),
        inserts / elapsed,
        usage.commands,
        usage.commands_by_name(),
    ))
}

pub async fn run(
    db: &seqid::Database,
    monitor: &Arc<Monitor>,
    config: &Config,
) -> Result<Vec<Row>, BoxError> {
    let mut rows = Vec::new();
    for tasks in TASKS {
        for route in [Route::Handle, Route::Bare] {
            rows.push(Row {
                tasks,
                route,
                per_insert_ms: Vec::new(),
                per_second: Vec::new(),
                commands_per_insert: 0.0,
                steps: String::new(),
            });
        }
    }
    for round in 0..config.rounds.min(3) {
        for tasks in TASKS {
            let mut routes = [Route::Handle, Route::Bare];
            routes.rotate_left(round % 2);
            for route in routes {
                let (ms, per_second, commands, steps) = trial(db, monitor, route, tasks).await?;
                let row = rows
                    .iter_mut()
                    .find(|row| row.tasks == tasks && row.route == route)
                    .expect("a row per trial");
                row.per_insert_ms.push(ms);
                row.per_second.push(per_second);
                row.commands_per_insert = commands as f64 / (INSERTS / tasks * tasks) as f64;
                row.steps = steps;
            }
        }
    }
    Ok(rows)
}

pub fn print(rows: &[Row]) {
    let mut table = Table::new(&[
        "tasks",
        "optimistic insert through",
        "ms per insert",
        "× handle",
        "inserts/s",
        "commands / insert",
        "commands (mean time each), last round",
    ]);
    for row in rows {
        let handle = rows
            .iter()
            .find(|other| other.tasks == row.tasks && other.route == Route::Handle)
            .map_or(f64::NAN, |handle| median(&handle.per_insert_ms));
        let ms = median(&row.per_insert_ms);
        table.row(vec![
            row.tasks.to_string(),
            row.route.label().into(),
            format!("{ms:.2}"),
            format!("{:.2}", ms / handle),
            format!("{:.0}", median(&row.per_second)),
            format!("{:.2}", row.commands_per_insert),
            row.steps.clone(),
        ]);
    }
    table.print();
}
