//! A separate OS process for the multi-process tests: inserts documents with one
//! strategy from many tasks and prints `<id> <writer> <n>` for each.
//!
//! Usage: `seqid-worker <strategy> <database> <writer> <tasks> <per-task>`, where the
//! strategy is `counters`, `optimistic`, `block`, `gapless`, or `scoped-` and one of the
//! first three (numbers per project; the `n`-th document goes to `models::project_of(n)`),
//! with `MONGODB_URI` set. It prints `ready` once connected and starts when it reads a
//! line on stdin, so that the parent can start every writer at the same moment.
//!
//! A strategy `equal/<model>/<via>/<op>/<by>` runs an equal-document writer instead
//! (`common/equal.rs`): documents all equal but for the id, written by `<by>` through a
//! `handle` or a `bare` database, `one` at a time, `many` in batches or `both`.

#[path = "../common/equal.rs"]
mod equal;
#[path = "../common/models.rs"]
mod models;
#[path = "../common/tutorial.rs"]
mod tutorial;

use std::io::{BufRead, Write};
use std::time::Duration;

use models::{
    BlockDoc, CountedDoc, GaplessDoc, OptimisticDoc, ScopedBlock, ScopedCounted, ScopedOptimistic,
    Written, insert_written,
};

const DEADLINE: Duration = Duration::from_secs(300);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [strategy, database, writer, tasks, per_task] = &args[..] else {
        fail("usage: seqid-worker <strategy> <database> <writer> <tasks> <per-task>");
    };
    let tasks: usize = tasks
        .parse()
        .unwrap_or_else(|_| fail("tasks must be a number"));
    let per_task: u32 = per_task
        .parse()
        .unwrap_or_else(|_| fail("per-task must be a number"));
    let uri = std::env::var("MONGODB_URI").unwrap_or_else(|_| fail("MONGODB_URI is not set"));
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| fail(&e.to_string()));
    let result = runtime.block_on(async {
        let client = mongodb::Client::with_uri_str(&uri).await?;
        // One handle per process, as an application keeps one next to its client.
        let db = seqid::Sequences::new(&client).database(database);
        db.run_command(mongodb::bson::doc! { "ping": 1 }).await?;
        println!("ready");
        std::io::stdout().flush()?;
        std::io::stdin().lock().read_line(&mut String::new())?;
        if let Some(mode) = strategy.strip_prefix("equal/") {
            let run = write_equal(&client, database, mode, tasks, per_task);
            return tokio::time::timeout(DEADLINE, run)
                .await
                .map_err(|_| "deadline passed")?;
        }
        let run = async {
            match strategy.as_str() {
                "counters" => insert::<CountedDoc>(&db, writer, tasks, per_task).await,
                "optimistic" => insert::<OptimisticDoc>(&db, writer, tasks, per_task).await,
                "block" => insert::<BlockDoc>(&db, writer, tasks, per_task).await,
                "gapless" => insert::<GaplessDoc>(&db, writer, tasks, per_task).await,
                "scoped-counters" => insert::<ScopedCounted>(&db, writer, tasks, per_task).await,
                "scoped-block" => insert::<ScopedBlock>(&db, writer, tasks, per_task).await,
                "scoped-optimistic" => {
                    insert::<ScopedOptimistic>(&db, writer, tasks, per_task).await
                }
                other => fail(&format!("unknown strategy {other}")),
            }
        };
        tokio::time::timeout(DEADLINE, run)
            .await
            .map_err(|_| "deadline passed")?
    });
    if let Err(error) = result {
        fail(&error.to_string());
    }
}

async fn insert<T: Written>(
    db: &seqid::Database,
    writer: &str,
    tasks: usize,
    per_task: u32,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut handles = Vec::new();
    for task in 0..tasks {
        let (db, writer) = (db.clone(), format!("{writer}-{task}"));
        handles.push(tokio::spawn(async move {
            let mut lines = Vec::new();
            for n in 0..per_task {
                let id = insert_written::<T>(&db, &writer, n).await?;
                lines.push(format!("{id} {writer} {n}"));
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(lines)
        }));
    }
    let mut out = std::io::stdout().lock();
    for handle in handles {
        for line in handle.await?? {
            writeln!(out, "{line}")?;
        }
    }
    // Counter upserts retried (each may leave a gap on a server that applies an upsert
    // and answers it with no document), for the parent's check.
    writeln!(out, "retries {}", T::stats(db).retries)?;
    Ok(())
}

/// An equal-document writer: prints `<id> <by> <n>` for each document acknowledged, then
/// the handle's counter retries.
async fn write_equal(
    client: &mongodb::Client,
    database: &str,
    mode: &str,
    tasks: usize,
    per_task: u32,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let Some((model, via, op, by)) = equal::parse_worker_mode(mode) else {
        fail(&format!("bad equal mode {mode}"));
    };
    let via = equal::Via::on(via, client, database)
        .unwrap_or_else(|| fail(&format!("bad database kind {via}")));
    let (lines, retries) = equal::write_model(model, &via, by, tasks, per_task, op).await?;
    let mut out = std::io::stdout().lock();
    for (id, by, n) in lines {
        writeln!(out, "{id} {by} {n}")?;
    }
    writeln!(out, "retries {retries}")?;
    Ok(())
}

fn fail(message: &str) -> ! {
    eprintln!("seqid-worker: {message}");
    std::process::exit(1)
}
