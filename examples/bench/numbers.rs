//! Numbers on their own (issue 49): numbers handed out per second with no document, by
//! `db.sequence(name).next()` and its kin, against the two ways the seed documents take
//! them by hand:
//!
//! - **the tutorial by hand**: the MongoDB tutorial's `getNextSequence`, the driver's
//!   `find_one_and_update({ _id: name }, { $inc: { seq: 1 } })`, upsert, the document after
//!   the update, per number;
//! - **the Go post by hand**: the blog post's `GetNextId()`, a block of 25 reserved with one
//!   `$inc: { sequence: 25 }` (the same call) when the last is spent, the numbers handed out
//!   from memory, under a mutex (`tokio::sync::Mutex`, held across the call as the post's
//!   `sync.Mutex` is) shared by the tasks.
//!
//! seqid's contenders: `next()` through a `Sequences` handle (counters) and through a bare
//! `mongodb::Database`, `.block(25).next()` and `.block(100).next()` through the handle,
//! and `next_n(16)` through the handle (counted per number). Every contender has a counter
//! of its own, and the tutorial's, the Go post's and the handle's state live for the whole
//! part, as an application's would.
//!
//! Fixed-duration trials (each of the tasks takes numbers until the deadline), interleaved
//! as `for round { for tasks { for contender in rotated(round) { trial } } }`. Every number
//! a contender takes is kept and checked at the end: none twice, each at least 1 and at
//! most its counter's value, and for the counters contenders, 1 to the counter's value
//! with none missing (a wrong number fails the run).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mongodb::Collection;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::options::ReturnDocument;
use seqid::AsDatabase;

use crate::Config;
use crate::model::BoxError;
use crate::probe::{Monitor, Trial};
use crate::stats::{Table, median, min_max, ratio_cell, verdict};

/// The counters collection of every contender: the tutorial's, and seqid's by default.
const COUNTERS: &str = "counters";

/// The Go post's block: `incrementBy: 25`.
const GO_BLOCK: i64 = 25;

/// `next_n`'s count.
const NEXT_N: u64 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Contender {
    Tutorial,
    GoPost,
    Counters,
    CountersBare,
    Block25,
    Block100,
    NextN,
}

impl Contender {
    const ALL: [Contender; 7] = [
        Contender::Tutorial,
        Contender::GoPost,
        Contender::Counters,
        Contender::CountersBare,
        Contender::Block25,
        Contender::Block100,
        Contender::NextN,
    ];

    fn label(self) -> &'static str {
        match self {
            Contender::Tutorial => "tutorial `getNextSequence`, by hand ($inc 1 per number)",
            Contender::GoPost => "Go post `GetNextId`, by hand (block of 25 under a mutex)",
            Contender::Counters => "seqid `next()`, counters (handle)",
            Contender::CountersBare => "seqid `next()`, counters (bare mongodb::Database)",
            Contender::Block25 => "seqid `.block(25).next()` (handle)",
            Contender::Block100 => "seqid `.block(100).next()` (handle)",
            Contender::NextN => "seqid `next_n(16)`, counters (handle), per number",
        }
    }

    /// The counter's `_id` in `counters`.
    fn sequence(self) -> &'static str {
        match self {
            Contender::Tutorial => "numbers_tutorial",
            Contender::GoPost => "numbers_go_post",
            Contender::Counters => "numbers_counters",
            Contender::CountersBare => "numbers_counters_bare",
            Contender::Block25 => "numbers_block25",
            Contender::Block100 => "numbers_block100",
            Contender::NextN => "numbers_next_n",
        }
    }

    /// The counter's value field: the Go post names it `sequence`, the others `seq`.
    fn field(self) -> &'static str {
        match self {
            Contender::GoPost => "sequence",
            _ => "seq",
        }
    }

    /// Whether every number up to the counter's value is handed out: one `$inc` per call,
    /// nothing kept in memory.
    fn dense(self) -> bool {
        matches!(
            self,
            Contender::Tutorial | Contender::Counters | Contender::CountersBare | Contender::NextN
        )
    }

    /// The target a row is held to: (the baseline, at least), at 1, 16 and 64 tasks.
    fn target(self, tasks: usize) -> Option<(Contender, f64)> {
        match (self, tasks) {
            (Contender::Counters, 16 | 64) => Some((Contender::Tutorial, 1.5)),
            (Contender::Block25, 1 | 16 | 64) => Some((Contender::GoPost, 0.95)),
            _ => None,
        }
    }

    /// Takes the contender's next number (`next_n`: its next 16) into `into`.
    async fn take(self, on: &On, into: &mut Vec<i64>) -> Result<(), BoxError> {
        let name = self.sequence();
        match self {
            Contender::Tutorial => into.push(by_hand(&on.counters, name, "seq", 1).await?),
            Contender::GoPost => into.push(on.go_post.next().await?),
            Contender::Counters => into.push(on.handle.sequence(name).next().await?),
            Contender::CountersBare => into.push(on.bare.sequence(name).next().await?),
            Contender::Block25 => into.push(on.handle.sequence(name).block(25).next().await?),
            Contender::Block100 => into.push(on.handle.sequence(name).block(100).next().await?),
            Contender::NextN => into.extend(on.handle.sequence(name).next_n(NEXT_N).await?),
        }
        Ok(())
    }
}

/// What the contenders take their numbers through, for the whole part.
struct On {
    /// A `Sequences` handle of the benchmark's client.
    handle: seqid::Database,
    /// The same client's database, bare.
    bare: mongodb::Database,
    /// The tutorial's counters collection, for the by-hand contenders.
    counters: Collection<BsonDocument>,
    go_post: GoPost,
}

/// The Go post's `MongoIdGenerator`: `nextId` and `maxId` under one mutex, its counter
/// `sequence` of `counters` (also the latency part's, by hand).
pub struct GoPost {
    counters: Collection<BsonDocument>,
    sequence: &'static str,
    /// `(nextId, maxId)`.
    block: tokio::sync::Mutex<(i64, i64)>,
}

impl GoPost {
    /// A generator with no block yet: its first call reserves one.
    pub fn new(counters: Collection<BsonDocument>, sequence: &'static str) -> Self {
        GoPost {
            counters,
            sequence,
            block: tokio::sync::Mutex::new((0, 0)),
        }
    }

    /// `GetNextId()`: the lock, a new block when `nextId == maxId`, then `nextId + 1`.
    pub async fn next(&self) -> Result<i64, BoxError> {
        let mut block = self.block.lock().await;
        let (next, max) = &mut *block;
        if *next == *max {
            let value = by_hand(&self.counters, self.sequence, "sequence", GO_BLOCK).await?;
            *next = value - GO_BLOCK;
            *max = value;
        }
        *next += 1;
        Ok(*next)
    }
}

/// `findAndModify({ _id: name }, { $inc: { field: by } })`, upsert, the new document: its
/// `field`.
pub async fn by_hand(
    counters: &Collection<BsonDocument>,
    name: &str,
    field: &str,
    by: i64,
) -> Result<i64, BoxError> {
    // SecantusDB 0.7.0b3 quirk (`model::tutorial_next_id`): under concurrent use this
    // upsert sometimes answers `value: null` although it applied the `$inc`; asked again,
    // leaving a gap. Bounded, so that a server that keeps answering null stops the run.
    for _ in 0..10 {
        let counter = counters
            .find_one_and_update(doc! { "_id": name }, doc! { "$inc": { field: by } })
            .upsert(true)
            .return_document(ReturnDocument::After)
            .await?;
        if let Some(counter) = counter {
            return value(&counter, field);
        }
    }
    Err("findAndModify with upsert returned no document, 10 times".into())
}

fn value(counter: &BsonDocument, field: &str) -> Result<i64, BoxError> {
    match counter.get(field) {
        Some(Bson::Int32(v)) => Ok(i64::from(*v)),
        Some(Bson::Int64(v)) => Ok(*v),
        other => Err(format!("the counter's {field} is {other:?}").into()),
    }
}

/// `tasks` tasks take numbers until `duration` has passed; every number taken is added to
/// `taken`.
async fn trial(
    on: &Arc<On>,
    monitor: &Monitor,
    server_pid: Option<u32>,
    contender: Contender,
    tasks: usize,
    duration: Duration,
    taken: &mut Vec<i64>,
) -> Result<Trial, BoxError> {
    let before = monitor.snapshot(server_pid);
    let start = Instant::now();
    let deadline = start + duration;
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let on = Arc::clone(on);
            tokio::spawn(async move {
                let mut taken = Vec::new();
                while Instant::now() < deadline {
                    contender.take(&on, &mut taken).await?;
                }
                Ok::<_, BoxError>(taken)
            })
        })
        .collect();
    let mut numbers = 0;
    for handle in handles {
        let mut of_task = handle.await??;
        numbers += of_task.len() as u64;
        taken.append(&mut of_task);
    }
    let elapsed = start.elapsed();
    let usage = before.delta(&monitor.snapshot(server_pid));
    Ok(Trial {
        count: numbers,
        elapsed,
        usage,
    })
}

/// Each contender's trials, per task count: `trials[(contender, tasks)][round]`; and what
/// the check found, per contender.
pub struct Results {
    trials: BTreeMap<(Contender, usize), Vec<Trial>>,
    checks: Vec<(Contender, String)>,
    tasks: Vec<usize>,
}

/// Runs the part on a handle and a bare database of the benchmark's client.
pub async fn run(
    db: &seqid::Database,
    monitor: &Monitor,
    server_pid: Option<u32>,
    config: &Config,
) -> Result<Results, BoxError> {
    let bare = db.client().database(db.name());
    let counters = bare.collection::<BsonDocument>(COUNTERS);
    let names: Vec<&str> = Contender::ALL.iter().map(|c| c.sequence()).collect();
    counters
        .delete_many(doc! { "_id": { "$in": names } })
        .await?;
    let on = Arc::new(On {
        handle: seqid::Sequences::new(db.client()).database(db.name()),
        bare,
        counters: counters.clone(),
        go_post: GoPost::new(counters.clone(), Contender::GoPost.sequence()),
    });
    let mut taken: BTreeMap<Contender, Vec<i64>> = BTreeMap::new();
    // Warm-up, not recorded (its numbers are checked): makes the counters, opens the pool.
    for contender in Contender::ALL {
        let into = taken.entry(contender).or_default();
        trial(
            &on,
            monitor,
            server_pid,
            contender,
            64,
            config.trial / 4,
            into,
        )
        .await?;
    }
    let mut trials: BTreeMap<(Contender, usize), Vec<Trial>> = BTreeMap::new();
    for round in 0..config.rounds {
        for &tasks in &config.tasks {
            let mut order = Contender::ALL;
            order.rotate_left(round % Contender::ALL.len());
            for contender in order {
                let into = taken.entry(contender).or_default();
                let t = trial(
                    &on,
                    monitor,
                    server_pid,
                    contender,
                    tasks,
                    config.trial,
                    into,
                )
                .await?;
                trials.entry((contender, tasks)).or_default().push(t);
            }
        }
        eprintln!("  round {}/{} done", round + 1, config.rounds);
    }
    let mut checks = Vec::new();
    for (contender, numbers) in taken {
        let stored = counters
            .find_one(doc! { "_id": contender.sequence() })
            .await?
            .ok_or_else(|| format!("{}: no counter", contender.label()))?;
        let counter = value(&stored, contender.field())?;
        checks.push((contender, check(contender, numbers, counter)?));
    }
    Ok(Results {
        trials,
        checks,
        tasks: config.tasks.clone(),
    })
}

/// Every number of `contender` distinct, between 1 and the counter's value, and for the
/// dense contenders all of 1..=counter; what was found, or an error that stops the run.
fn check(contender: Contender, mut numbers: Vec<i64>, counter: i64) -> Result<String, BoxError> {
    let label = contender.label();
    let count = numbers.len();
    numbers.sort_unstable();
    numbers.dedup();
    if numbers.len() != count {
        return Err(format!(
            "{label}: {} numbers handed out twice (of {count})",
            count - numbers.len()
        )
        .into());
    }
    let (Some(&first), Some(&last)) = (numbers.first(), numbers.last()) else {
        return Err(format!("{label}: no number taken").into());
    };
    if first < 1 || last > counter {
        return Err(format!(
            "{label}: numbers {first}..={last} outside 1..={counter}, the counter's value"
        )
        .into());
    }
    let missing = last - count as i64;
    if contender.dense() && (missing != 0 || last != counter) {
        // SecantusDB may apply an `$inc` and answer null (see `by_hand`): the number is
        // taken again, leaving a gap. No other server does.
        let quirk = seqid_harness::server_flavor()? == seqid_harness::ServerFlavor::Secantus;
        if !quirk {
            return Err(format!(
                "{label}: {count} numbers up to {last}, counter {counter}: not 1..={counter}"
            )
            .into());
        }
        return Ok(format!(
            "{count} distinct, {} missing of 1..={counter} (SecantusDB's null answers)",
            counter - count as i64
        ));
    }
    if contender.dense() {
        return Ok(format!("{count} distinct: exactly 1..={counter}"));
    }
    Ok(format!(
        "{count} distinct, {missing} missing below the largest ({last}); counter {counter}"
    ))
}

pub fn print(results: &Results) {
    let mut table = Table::new(&[
        "tasks",
        "contender",
        "numbers/s",
        "round trips/number",
        "client CPU µs/number",
        "× tutorial by hand",
        "× Go post by hand",
        "target",
        "met?",
    ]);
    let mut others = Vec::new();
    for &tasks in &results.tasks {
        let ratios = |contender: Contender, baseline: Contender| -> Vec<f64> {
            let of = |c| &results.trials[&(c, tasks)];
            of(contender)
                .iter()
                .zip(of(baseline))
                .map(|(a, b)| a.per_second() / b.per_second())
                .collect()
        };
        for contender in Contender::ALL {
            let trials = &results.trials[&(contender, tasks)];
            let m = |f: fn(&Trial) -> f64| median(&trials.iter().map(f).collect::<Vec<_>>());
            others.extend(trials.iter().map(Trial::others_busy));
            let vs_tutorial = ratios(contender, Contender::Tutorial);
            let vs_go = ratios(contender, Contender::GoPost);
            let cell = |baseline: Contender, ratios: &[f64]| {
                if contender == baseline {
                    "1".into()
                } else {
                    ratio_cell(ratios)
                }
            };
            let (target, met) = match contender.target(tasks) {
                Some((baseline, at_least)) => {
                    let (name, value) = if baseline == Contender::Tutorial {
                        ("the tutorial by hand", median(&vs_tutorial))
                    } else {
                        ("the Go post by hand", median(&vs_go))
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
                format!("{:.0}", m(Trial::per_second)),
                format!("{:.3}", m(Trial::round_trips)),
                format!("{:.1}", m(Trial::client_cpu_us)),
                cell(Contender::Tutorial, &vs_tutorial),
                cell(Contender::GoPost, &vs_go),
                target,
                met,
            ]);
        }
    }
    table.print();
    let mut checks = Table::new(&["contender", "every number taken (warm-up included)"]);
    for (contender, found) in &results.checks {
        checks.row(vec![contender.label().into(), found.clone()]);
    }
    checks.print();
    let (lo, hi) = min_max(&others);
    println!(
        "Other processes on the machine used {:.0} % of one CPU in the median trial \
         ({:.0}–{:.0} % over the trials).\n",
        median(&others) * 100.0,
        lo * 100.0,
        hi * 100.0
    );
}
