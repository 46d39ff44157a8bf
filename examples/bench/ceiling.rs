//! The server's ceiling: how many trivial commands (`ping`) it answers per second at the
//! same concurrencies, on the same client. A strategy cannot go faster than
//! `ping/s ÷ round trips per insert`, whatever seqid does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mongodb::bson::doc;
use seqid::Database;

use crate::Config;
use crate::model::BoxError;
use crate::probe::process_cpu;
use crate::stats::{Table, median};

async fn pings(
    db: &Database,
    tasks: usize,
    duration: Duration,
    server_pid: Option<u32>,
) -> Result<(f64, f64), BoxError> {
    let admin = Arc::new(db.client().database("admin"));
    let cpu_before = server_pid.and_then(process_cpu);
    let start = Instant::now();
    let deadline = start + duration;
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let admin = admin.clone();
            tokio::spawn(async move {
                let mut n = 0u64;
                while Instant::now() < deadline {
                    admin.run_command(doc! { "ping": 1 }).await?;
                    n += 1;
                }
                Ok::<u64, BoxError>(n)
            })
        })
        .collect();
    let mut total = 0;
    for handle in handles {
        total += handle.await??;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let busy = match (cpu_before, server_pid.and_then(process_cpu)) {
        (Some(a), Some(b)) => (b - a).as_secs_f64() / elapsed,
        _ => f64::NAN,
    };
    Ok((total as f64 / elapsed, busy))
}

/// Median `ping`s per second and server CPU share, by concurrency.
pub async fn run(
    db: &Database,
    server_pid: Option<u32>,
    config: &Config,
) -> Result<Vec<(usize, f64, f64)>, BoxError> {
    let rounds = config.rounds.min(3);
    let mut samples = vec![(Vec::new(), Vec::new()); config.tasks.len()];
    for _ in 0..rounds {
        for (i, &tasks) in config.tasks.iter().enumerate() {
            let (rate, busy) = pings(db, tasks, config.trial, server_pid).await?;
            samples[i].0.push(rate);
            samples[i].1.push(busy);
        }
    }
    Ok(config
        .tasks
        .iter()
        .copied()
        .zip(samples)
        .map(|(tasks, (rate, busy))| (tasks, median(&rate), median(&busy)))
        .collect())
}

pub fn print(rows: &[(usize, f64, f64)]) {
    let mut table = Table::new(&["tasks", "ping/s", "server CPU busy"]);
    for (tasks, rate, busy) in rows {
        table.row(vec![
            tasks.to_string(),
            format!("{rate:.0}"),
            format!("{:.0} %", busy * 100.0),
        ]);
    }
    table.print();
}

/// One command, as seqid or the tutorial sends it (and the counter's `findAndModify` with
/// the projection seqid sent until d3eb10d, for comparison), for [`command_costs`].
#[derive(Clone, Copy)]
enum Probe {
    Ping,
    IncNoProjection,
    IncProjection,
    TopNoProjection,
    TopProjection,
    InsertIntId,
}

impl Probe {
    const ALL: [Probe; 6] = [
        Probe::Ping,
        Probe::IncNoProjection,
        Probe::IncProjection,
        Probe::TopNoProjection,
        Probe::TopProjection,
        Probe::InsertIntId,
    ];

    fn label(self) -> &'static str {
        match self {
            Probe::Ping => "`ping`",
            Probe::IncNoProjection => {
                "`findAndModify` `$inc: {seq: 1}`, upsert, new (the tutorial's and seqid's)"
            }
            Probe::IncProjection => {
                "`findAndModify` `$inc: {seq: 1}`, upsert, new, with a projection `fields: {seq: 1}`"
            }
            Probe::TopNoProjection => "`find({}).sort({_id: -1}).limit(1)`, 1,000 docs",
            Probe::TopProjection => {
                "`find({}).sort({_id: -1}).limit(1)`, `projection: {_id: 1}`, 1,000 docs (seqid's)"
            }
            Probe::InsertIntId => "`insert` of `{_id: <int>, name, n}`",
        }
    }

    async fn send(self, db: &Database, n: i64) -> Result<(), BoxError> {
        use mongodb::bson::Document as BsonDocument;
        use mongodb::options::ReturnDocument;
        let counters = db.collection::<BsonDocument>("probe_counters");
        let target = db.collection::<BsonDocument>("probe_target");
        match self {
            Probe::Ping => {
                db.run_command(doc! { "ping": 1 }).await?;
            }
            Probe::IncNoProjection | Probe::IncProjection => {
                let mut action = counters
                    .find_one_and_update(doc! { "_id": "probe" }, doc! { "$inc": { "seq": 1 } })
                    .upsert(true)
                    .return_document(ReturnDocument::After);
                if matches!(self, Probe::IncProjection) {
                    action = action.projection(doc! { "seq": 1 });
                }
                action.await?;
            }
            Probe::TopNoProjection | Probe::TopProjection => {
                let mut action = target.find_one(doc! {}).sort(doc! { "_id": -1 });
                if matches!(self, Probe::TopProjection) {
                    action = action.projection(doc! { "_id": 1 });
                }
                action.await?;
            }
            Probe::InsertIntId => {
                db.collection::<BsonDocument>("probe_inserts")
                    .insert_one(doc! { "_id": n, "name": "probe", "n": 1 })
                    .await?;
            }
        }
        Ok(())
    }
}

/// Wall time and server CPU time of single commands, one task, interleaved rounds:
/// what each round trip costs on this server.
pub async fn command_costs(
    db: &Database,
    server_pid: Option<u32>,
    config: &Config,
) -> Result<Vec<(&'static str, f64, f64)>, BoxError> {
    use mongodb::bson::Document as BsonDocument;
    let target = db.collection::<BsonDocument>("probe_target");
    target.drop().await?;
    target
        .insert_many((1..=1000).map(|i| doc! { "_id": i, "name": "probe", "n": i }))
        .await?;
    let calls = if config.rounds > 1 { 300 } else { 50 };
    let rounds = config.rounds.min(5);
    let mut samples = vec![(Vec::new(), Vec::new()); Probe::ALL.len()];
    let mut n = 0i64;
    for _ in 0..rounds {
        for (i, probe) in Probe::ALL.into_iter().enumerate() {
            let cpu_before = server_pid.and_then(process_cpu);
            let start = Instant::now();
            for _ in 0..calls {
                n += 1;
                probe.send(db, n).await?;
            }
            let wall = start.elapsed().as_secs_f64() * 1e6 / calls as f64;
            let cpu = match (cpu_before, server_pid.and_then(process_cpu)) {
                (Some(a), Some(b)) => (b - a).as_secs_f64() * 1e6 / calls as f64,
                _ => f64::NAN,
            };
            samples[i].0.push(wall);
            samples[i].1.push(cpu);
        }
    }
    for name in ["probe_target", "probe_counters", "probe_inserts"] {
        db.collection::<BsonDocument>(name).drop().await?;
    }
    Ok(Probe::ALL
        .into_iter()
        .zip(samples)
        .map(|(probe, (wall, cpu))| (probe.label(), median(&wall), median(&cpu)))
        .collect())
}

pub fn print_costs(rows: &[(&'static str, f64, f64)]) {
    let mut table = Table::new(&["command (1 task)", "wall µs", "server CPU µs"]);
    for (label, wall, cpu) in rows {
        table.row(vec![
            label.to_string(),
            format!("{wall:.0}"),
            format!("{cpu:.0}"),
        ]);
    }
    table.print();
}
