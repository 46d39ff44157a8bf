//! Single inserts: the contenders of `model::Contender` at each concurrency of `--tasks`,
//! interleaved rounds of fixed-duration trials on one client and one server.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mongodb::bson::{Document as BsonDocument, doc};
use seqid::Database;

use crate::Config;
use crate::model::{BoxError, Contender};
use crate::probe::{Monitor, Snapshot};
use crate::stats::{Table, median, ratio_cell, verdict};

/// One fixed-duration trial.
#[derive(Clone, Debug)]
pub struct Trial {
    pub inserts: u64,
    pub elapsed: Duration,
    pub usage: Snapshot,
}

impl Trial {
    pub fn per_second(&self) -> f64 {
        self.inserts as f64 / self.elapsed.as_secs_f64()
    }

    pub fn round_trips(&self) -> f64 {
        self.usage.commands as f64 / self.inserts as f64
    }

    /// Microseconds per insert of `d`.
    fn micros(&self, d: Option<Duration>) -> f64 {
        d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e6 / self.inserts as f64)
    }

    pub fn server_cpu_us(&self) -> f64 {
        self.micros(self.usage.server_cpu)
    }

    pub fn client_cpu_us(&self) -> f64 {
        self.micros(self.usage.client_cpu)
    }

    pub fn command_time_us(&self) -> f64 {
        self.micros(Some(self.usage.command_time))
    }

    /// Share of one CPU that other processes used during the trial.
    pub fn others_busy(&self) -> f64 {
        self.usage
            .others_cpu()
            .map_or(f64::NAN, |d| d.as_secs_f64() / self.elapsed.as_secs_f64())
    }

    /// Share of one CPU the server used during the trial.
    pub fn server_busy(&self) -> f64 {
        self.usage
            .server_cpu
            .map_or(f64::NAN, |d| d.as_secs_f64() / self.elapsed.as_secs_f64())
    }
}

/// Runs `tasks` tasks that each insert until `duration` has passed.
pub async fn trial(
    db: &Database,
    monitor: &Monitor,
    server_pid: Option<u32>,
    contender: Contender,
    tasks: usize,
    duration: Duration,
) -> Result<Trial, BoxError> {
    let before = monitor.snapshot(server_pid);
    let start = Instant::now();
    let deadline = start + duration;
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let db = db.clone();
            tokio::spawn(async move {
                let name = format!("task {task}");
                let mut n = 0i32;
                while Instant::now() < deadline {
                    contender.insert_one(&db, &name, n).await?;
                    n += 1;
                }
                Ok::<u64, BoxError>(n as u64)
            })
        })
        .collect();
    let mut inserts = 0;
    for handle in handles {
        inserts += handle.await??;
    }
    let elapsed = start.elapsed();
    let usage = before.delta(&monitor.snapshot(server_pid));
    Ok(Trial {
        inserts,
        elapsed,
        usage,
    })
}

/// Every trial of every round: `results[(contender, tasks)][round]`.
pub type Results = BTreeMap<(Contender, usize), Vec<Trial>>;

/// `for round { for concurrency { for contender in rotated(round) { trial } } }`.
/// Every round starts with empty target collections (the counters are kept).
pub async fn run(
    db: &Database,
    monitor: &Arc<Monitor>,
    server_pid: Option<u32>,
    config: &Config,
) -> Result<Results, BoxError> {
    // Warm-up, not recorded: creates the collections and counters and opens the pool.
    for contender in Contender::ALL {
        trial(db, monitor, server_pid, contender, 64, config.trial / 4).await?;
    }
    let mut results = Results::new();
    for round in 0..config.rounds {
        for contender in Contender::ALL {
            db.collection::<BsonDocument>(contender.collection())
                .drop()
                .await?;
        }
        for &tasks in &config.tasks {
            let mut order = Contender::ALL;
            order.rotate_left(round % Contender::ALL.len());
            for contender in order {
                let t = trial(db, monitor, server_pid, contender, tasks, config.trial).await?;
                results.entry((contender, tasks)).or_default().push(t);
            }
        }
        eprintln!("  round {}/{} done", round + 1, config.rounds);
    }
    // Leave nothing big behind for the later parts of the run.
    for contender in Contender::ALL {
        db.collection::<BsonDocument>(contender.collection())
            .delete_many(doc! {})
            .await?;
    }
    Ok(results)
}

/// Per-round ratios of `contender` to `baseline` at `tasks`.
pub fn ratios(
    results: &Results,
    contender: Contender,
    baseline: Contender,
    tasks: usize,
) -> Vec<f64> {
    let (a, b) = (&results[&(contender, tasks)], &results[&(baseline, tasks)]);
    a.iter()
        .zip(b)
        .map(|(x, y)| x.per_second() / y.per_second())
        .collect()
}

/// The target that applies to a row, if any: (`× plain` or `× tutorial`, at least).
/// Targets are set at 1, 16 and 64 tasks; other concurrencies have none.
fn target(contender: Contender, tasks: usize) -> Option<(Contender, f64)> {
    match (contender, tasks) {
        (Contender::Block100, 1 | 16 | 64) => Some((Contender::Plain, 0.95)),
        (Contender::Counters, 1) => Some((Contender::Tutorial, 0.97)),
        (Contender::Counters, 16 | 64) => Some((Contender::Tutorial, 1.5)),
        (Contender::Optimistic, 1) => Some((Contender::Plain, 0.45)),
        (Contender::Optimistic, 16) => Some((Contender::Plain, 0.5)),
        _ => None,
    }
}

pub fn print(results: &Results, config: &Config) {
    let mut table = Table::new(&[
        "tasks",
        "contender",
        "inserts/s",
        "round trips/insert",
        "× plain",
        "× tutorial",
        "× int _id ref.",
        "target",
        "met?",
    ]);
    for &tasks in &config.tasks {
        for contender in Contender::ALL {
            let trials = &results[&(contender, tasks)];
            let ips: Vec<f64> = trials.iter().map(Trial::per_second).collect();
            let rt: Vec<f64> = trials.iter().map(Trial::round_trips).collect();
            let vs_plain = ratios(results, contender, Contender::Plain, tasks);
            let vs_tutorial = ratios(results, contender, Contender::Tutorial, tasks);
            let vs_reference = ratios(results, contender, Contender::IntId, tasks);
            let (target_cell, met) = match target(contender, tasks) {
                Some((baseline, at_least)) => {
                    let value = median(if baseline == Contender::Plain {
                        &vs_plain
                    } else {
                        &vs_tutorial
                    });
                    let name = if baseline == Contender::Plain {
                        "plain"
                    } else {
                        "tutorial"
                    };
                    (
                        format!("≥ {at_least:.2} × {name}"),
                        verdict(value, at_least),
                    )
                }
                None => (String::new(), String::new()),
            };
            table.row(vec![
                tasks.to_string(),
                contender.label().into(),
                format!("{:.0}", median(&ips)),
                format!("{:.3}", median(&rt)),
                if contender == Contender::Plain {
                    "1".into()
                } else {
                    ratio_cell(&vs_plain)
                },
                if contender == Contender::Tutorial {
                    "1".into()
                } else {
                    ratio_cell(&vs_tutorial)
                },
                if contender == Contender::IntId {
                    "1".into()
                } else {
                    ratio_cell(&vs_reference)
                },
                target_cell,
                met,
            ]);
        }
    }
    table.print();
}

/// Where the time goes, per trial (medians over rounds).
pub fn print_profile(results: &Results, config: &Config) {
    let mut table = Table::new(&[
        "tasks",
        "contender",
        "wall µs/insert",
        "Σ command time µs/insert",
        "server CPU µs/insert",
        "server CPU busy",
        "client CPU µs/insert",
        "others' CPU busy",
        "commands × mean duration (last round)",
    ]);
    for &tasks in &config.tasks {
        for contender in Contender::ALL {
            let trials = &results[&(contender, tasks)];
            let m = |f: fn(&Trial) -> f64| median(&trials.iter().map(f).collect::<Vec<_>>());
            let wall = m(|t| t.elapsed.as_secs_f64() * 1e6 / t.inserts as f64);
            let last = trials.last().expect("at least one round");
            table.row(vec![
                tasks.to_string(),
                contender.label().into(),
                format!("{wall:.0}"),
                format!("{:.0}", m(Trial::command_time_us)),
                format!("{:.0}", m(Trial::server_cpu_us)),
                format!("{:.0} %", m(Trial::server_busy) * 100.0),
                format!("{:.0}", m(Trial::client_cpu_us)),
                format!("{:.0} %", m(Trial::others_busy) * 100.0),
                format!(
                    "{} inserts: {}",
                    last.inserts,
                    last.usage.commands_by_name()
                ),
            ]);
        }
    }
    table.print();
}
