//! Across a slow network (issue 58): every strategy, the seed documents' ways by hand and a
//! plain `insert_one`, through the harness's proxy with a fixed delay added to every round
//! trip (`--latencies`, in ms: 0, 1, 5 and 20 by default; the whole delay on the request's
//! way, so that one timer serves a round trip), at 1 to 256 tasks, for inserts and for
//! numbers on their own: throughput, and p50 / p99 / p99.9 of each call's time.
//!
//! Inserts: a plain `insert_one` (ObjectId), the tutorial's two calls by hand
//! (`getNextSequence` then `insert_one`), the Go post's block of 25 by hand then
//! `insert_one`, and seqid's counters, optimistic, block-100 and gapless (each insert in a
//! transaction of its own; not on nx-27017, whose transactions isolate nothing). Numbers on
//! their own: the tutorial's `getNextSequence` and the Go post's `GetNextId` by hand, and
//! seqid's `next()` (counters) and `.block(25).next()` through a `Sequences` handle.
//!
//! Each latency is a fresh database, a fresh client through the proxy (the driver's default
//! pool of 10 connections, as a service has it) and a fresh handle; within it,
//! `for round { for tasks { for contender in rotated(round) { trial } } }`. Every number a
//! contender takes is checked at the end of its latency: none twice, none below 1.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::options::ClientOptions;
use mongodb::{Client, Collection};
use plotters::prelude::*;
use seqid::action::Transaction;
use seqid::{AsDatabase, Document, Sequences};
use seqid_harness::FaultProxy;

use crate::Config;
use crate::model::{
    Block100Doc, Block100SpentDoc, BoxError, CountersDoc, GaplessDoc, Make, OptimisticDoc,
    PlainDoc, TutorialDoc,
};
use crate::numbers::{GoPost, by_hand};
use crate::stats::{Table, median, min_max, percentile, ratio_cell, verdict};

/// The counters collection of every contender.
const COUNTERS: &str = "counters";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Contender {
    Plain,
    Tutorial,
    GoPost,
    Counters,
    Optimistic,
    Block100,
    Block100Spent,
    Gapless,
    TutorialNumber,
    GoPostNumber,
    CountersNumber,
    Block25Number,
}

impl Contender {
    const INSERTS: [Contender; 8] = [
        Contender::Plain,
        Contender::Tutorial,
        Contender::GoPost,
        Contender::Counters,
        Contender::Optimistic,
        Contender::Block100,
        Contender::Block100Spent,
        Contender::Gapless,
    ];
    const NUMBERS: [Contender; 4] = [
        Contender::TutorialNumber,
        Contender::GoPostNumber,
        Contender::CountersNumber,
        Contender::Block25Number,
    ];

    fn label(self) -> &'static str {
        match self {
            Contender::Plain => "plain insert_one (ObjectId)",
            Contender::Tutorial => "tutorial by hand ($inc + insert_one)",
            Contender::GoPost => "Go post by hand (block of 25 + insert_one)",
            Contender::Counters => "seqid counters",
            Contender::Optimistic => "seqid optimistic",
            Contender::Block100 => "seqid block 100",
            Contender::Block100Spent => "seqid block 100, prefetch = false",
            Contender::Gapless => "seqid gapless (a transaction each)",
            Contender::TutorialNumber => "tutorial `getNextSequence` by hand",
            Contender::GoPostNumber => "Go post `GetNextId` by hand",
            Contender::CountersNumber => "seqid `next()`, counters (handle)",
            Contender::Block25Number => "seqid `.block(25).next()` (handle)",
        }
    }

    /// The counter's `_id` of a contender that takes numbers, by hand or through the handle.
    fn sequence(self) -> &'static str {
        match self {
            Contender::Tutorial => "latency_tutorial",
            Contender::GoPost => "latency_go_post",
            Contender::TutorialNumber => "latency_tutorial_number",
            Contender::GoPostNumber => "latency_go_post_number",
            Contender::CountersNumber => "latency_counters_number",
            _ => "latency_block25_number",
        }
    }

    /// A row's baselines, by which its `×` columns divide: a plain insert and the two
    /// seed documents by hand, of the same kind (inserts, or numbers on their own).
    fn baselines(self) -> [Option<Contender>; 3] {
        if Contender::INSERTS.contains(&self) {
            [
                Some(Contender::Plain),
                Some(Contender::Tutorial),
                Some(Contender::GoPost),
            ]
        } else {
            [
                None,
                Some(Contender::TutorialNumber),
                Some(Contender::GoPostNumber),
            ]
        }
    }

    /// One call: an insert, or a number (returned, to be checked).
    async fn once(self, on: &On, name: &str, n: i32) -> Result<Option<i64>, BoxError> {
        let db = &on.handle;
        match self {
            Contender::Plain => {
                db.collection::<PlainDoc>("latency_plain")
                    .insert_one(PlainDoc::make(name, n))
                    .await?;
            }
            Contender::Tutorial | Contender::GoPost => {
                let id = match self {
                    Contender::Tutorial => by_hand(&on.counters, self.sequence(), "seq", 1).await?,
                    _ => on.go_post_inserts.next().await?,
                };
                let name = name.to_owned();
                db.collection::<TutorialDoc>(self.sequence())
                    .insert_one(TutorialDoc { id, name, n })
                    .await?;
            }
            Contender::Counters => drop(CountersDoc::make(name, n).insert(db).await?),
            Contender::Optimistic => drop(OptimisticDoc::make(name, n).insert(db).await?),
            Contender::Block100 => drop(Block100Doc::make(name, n).insert(db).await?),
            Contender::Block100Spent => drop(Block100SpentDoc::make(name, n).insert(db).await?),
            Contender::Gapless => {
                let mut session = db.client().start_session().await?;
                Transaction::new(&mut session)
                    .run(db.clone(), |session, db| {
                        let mut doc = GaplessDoc::make(name, n);
                        Box::pin(async move {
                            doc.insert(&*db).session(&mut *session).await?;
                            Ok::<_, BoxError>(())
                        })
                    })
                    .await?;
            }
            Contender::TutorialNumber => {
                return Ok(Some(
                    by_hand(&on.counters, self.sequence(), "seq", 1).await?,
                ));
            }
            Contender::GoPostNumber => return Ok(Some(on.go_post_numbers.next().await?)),
            Contender::CountersNumber => {
                return Ok(Some(db.sequence(self.sequence()).next().await?));
            }
            Contender::Block25Number => {
                return Ok(Some(db.sequence(self.sequence()).block(25).next().await?));
            }
        }
        Ok(None)
    }
}

/// What the contenders of one latency go through.
struct On {
    /// A `Sequences` handle of the client through the proxy.
    handle: seqid::Database,
    /// The by-hand contenders' counters.
    counters: Collection<BsonDocument>,
    go_post_inserts: GoPost,
    go_post_numbers: GoPost,
}

/// One fixed-duration trial.
struct Trial {
    calls: u64,
    elapsed: Duration,
    /// Each call's time, in ms.
    times: Vec<f64>,
}

impl Trial {
    fn per_second(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }
}

/// `tasks` tasks call until `duration` has passed; the numbers taken go to `taken`.
async fn trial(
    on: &Arc<On>,
    contender: Contender,
    tasks: usize,
    duration: Duration,
    taken: &mut Vec<i64>,
) -> Result<Trial, BoxError> {
    let start = Instant::now();
    let deadline = start + duration;
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let on = Arc::clone(on);
            tokio::spawn(async move {
                let name = format!("task {task}");
                let (mut times, mut numbers) = (Vec::new(), Vec::new());
                let mut n = 0;
                while Instant::now() < deadline {
                    let began = Instant::now();
                    numbers.extend(contender.once(&on, &name, n).await?);
                    times.push(began.elapsed().as_secs_f64() * 1e3);
                    n += 1;
                }
                Ok::<_, BoxError>((times, numbers))
            })
        })
        .collect();
    let mut times = Vec::new();
    for handle in handles {
        let (of_task, mut numbers) = handle.await??;
        times.extend(of_task);
        taken.append(&mut numbers);
    }
    Ok(Trial {
        calls: times.len() as u64,
        elapsed: start.elapsed(),
        times,
    })
}

/// Every trial: `trials[(latency, contender, tasks)][round]`, the latencies in ms.
pub struct Results {
    trials: BTreeMap<(u32, Contender, usize), Vec<Trial>>,
    /// Per latency, a ping's time through the proxy: (p50, p99) in ms.
    pings: BTreeMap<u32, (f64, f64)>,
    latencies: Vec<f64>,
    tasks: Vec<usize>,
    contenders: Vec<Contender>,
    rounds: usize,
}

/// The key of a latency in ms (to a hundredth).
fn key(latency: f64) -> u32 {
    (latency * 100.0).round() as u32
}

/// A client of the proxy, with the driver's defaults.
async fn client_of(proxy: &FaultProxy) -> Result<Client, BoxError> {
    let mut options = ClientOptions::parse(proxy.uri()).await?;
    options.app_name = Some("seqid-bench-latency".into());
    Ok(Client::with_options(options)?)
}

/// 50 pings' times, in ms: (p50, p99).
async fn pings(db: &mongodb::Database) -> Result<(f64, f64), BoxError> {
    let mut times = Vec::new();
    for _ in 0..50 {
        let began = Instant::now();
        db.run_command(doc! { "ping": 1 }).await?;
        times.push(began.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok((percentile(&times, 0.5), percentile(&times, 0.99)))
}

/// Runs the part on a database of its own, `{name}_latency`.
pub async fn run(name: &str, config: &Config) -> Result<Results, BoxError> {
    let name = format!("{name}_latency");
    let proxy = FaultProxy::for_server().await?;
    let gapless = seqid_harness::server_flavor()? != seqid_harness::ServerFlavor::Nx;
    let contenders: Vec<Contender> = Contender::INSERTS
        .into_iter()
        .chain(Contender::NUMBERS)
        .filter(|&c| gapless || c != Contender::Gapless)
        .collect();
    let mut results = Results {
        trials: BTreeMap::new(),
        pings: BTreeMap::new(),
        latencies: config.latencies.clone(),
        tasks: config.latency_tasks.clone(),
        contenders: contenders.clone(),
        rounds: config.latency_rounds,
    };
    for &latency in &config.latencies {
        seqid_harness::fresh_database(&name).await?;
        proxy.set_latency(Duration::from_secs_f64(latency / 1e3), Duration::ZERO);
        let client = client_of(&proxy).await?;
        let bare = client.database(&name);
        let counters = bare.collection::<BsonDocument>(COUNTERS);
        let on = Arc::new(On {
            handle: Sequences::new(&client).database(&name),
            counters: counters.clone(),
            go_post_inserts: GoPost::new(counters.clone(), Contender::GoPost.sequence()),
            go_post_numbers: GoPost::new(counters.clone(), Contender::GoPostNumber.sequence()),
        });
        let mut taken: BTreeMap<Contender, Vec<i64>> = BTreeMap::new();
        // Warm-up, not recorded: opens the pool, makes the counters and collections.
        for &contender in &contenders {
            let into = taken.entry(contender).or_default();
            trial(&on, contender, 16, Duration::from_millis(200), into).await?;
        }
        results.pings.insert(key(latency), pings(&bare).await?);
        for round in 0..config.latency_rounds {
            for &tasks in &config.latency_tasks {
                let mut order = contenders.clone();
                order.rotate_left(round % contenders.len());
                for contender in order {
                    let into = taken.entry(contender).or_default();
                    let t = trial(&on, contender, tasks, config.latency_trial, into).await?;
                    let at = (key(latency), contender, tasks);
                    results.trials.entry(at).or_default().push(t);
                }
            }
            eprintln!(
                "  {latency} ms: round {}/{} done",
                round + 1,
                config.latency_rounds
            );
        }
        for (contender, numbers) in taken {
            let count = numbers.len();
            let distinct: BTreeSet<i64> = numbers.into_iter().collect();
            if distinct.len() != count || distinct.first().is_some_and(|&first| first < 1) {
                return Err(format!(
                    "{} at {latency} ms: {count} numbers, {} distinct, the least {:?}",
                    contender.label(),
                    distinct.len(),
                    distinct.first()
                )
                .into());
            }
        }
        drop(on);
        client.shutdown().await;
    }
    Ok(results)
}

impl Results {
    fn trials(&self, latency: f64, contender: Contender, tasks: usize) -> &[Trial] {
        self.trials
            .get(&(key(latency), contender, tasks))
            .map_or(&[], Vec::as_slice)
    }

    /// Per-round throughput ratios of `contender` to `baseline`.
    fn ratios(
        &self,
        latency: f64,
        contender: Contender,
        baseline: Contender,
        tasks: usize,
    ) -> Vec<f64> {
        let (a, b) = (
            self.trials(latency, contender, tasks),
            self.trials(latency, baseline, tasks),
        );
        a.iter()
            .zip(b)
            .map(|(x, y)| x.per_second() / y.per_second())
            .collect()
    }

    /// Every round's call times, sorted, in ms.
    fn times(&self, latency: f64, contender: Contender, tasks: usize) -> Vec<f64> {
        let mut times: Vec<f64> = self
            .trials(latency, contender, tasks)
            .iter()
            .flat_map(|t| t.times.iter().copied())
            .collect();
        times.sort_by(f64::total_cmp);
        times
    }

    fn rates(&self, latency: f64, contender: Contender, tasks: usize) -> Vec<f64> {
        self.trials(latency, contender, tasks)
            .iter()
            .map(Trial::per_second)
            .collect()
    }
}

/// The goals: (latency, what, the rows' tasks, the contender, its baseline, the
/// bound, whether the figure is p99.9's ratio (at most) or throughput's (at least)). At
/// 20 ms the throughput figures are stated with no bound.
fn goals(latencies: &[f64]) -> Vec<(f64, usize, Contender, Contender, Option<f64>, bool)> {
    let mut goals = Vec::new();
    for &latency in latencies {
        let bound = |b: f64| {
            if latency == 5.0 { Some(b) } else { None }
        };
        if latency == 5.0 || latency == 20.0 {
            goals.push((
                latency,
                64,
                Contender::CountersNumber,
                Contender::TutorialNumber,
                bound(10.0),
                false,
            ));
            goals.push((
                latency,
                64,
                Contender::Counters,
                Contender::Tutorial,
                bound(1.5),
                false,
            ));
            for tasks in [1, 4, 16, 64, 256] {
                goals.push((
                    latency,
                    tasks,
                    Contender::Block100,
                    Contender::Plain,
                    bound(0.95),
                    false,
                ));
            }
            for tasks in [1, 16, 64] {
                goals.push((
                    latency,
                    tasks,
                    Contender::Block25Number,
                    Contender::GoPostNumber,
                    bound(0.95),
                    false,
                ));
            }
        }
        if latency == 0.0 || latency == 5.0 {
            for tasks in [1, 16] {
                goals.push((
                    latency,
                    tasks,
                    Contender::Block100,
                    Contender::Plain,
                    Some(1.2),
                    true,
                ));
                // The same without the early refill, stated beside it.
                let spent = Contender::Block100Spent;
                goals.push((latency, tasks, spent, Contender::Plain, None, true));
            }
        }
    }
    goals
}

pub fn print(results: &Results) {
    let mut table = Table::new(&["added round trip", "ping p50 ms", "ping p99 ms"]);
    for &latency in &results.latencies {
        let (p50, p99) = results.pings[&key(latency)];
        table.row(vec![
            format!("{latency} ms"),
            format!("{p50:.2}"),
            format!("{p99:.2}"),
        ]);
    }
    table.print();

    println!("### Targets\n");
    let mut table = Table::new(&["latency", "tasks", "contender", "figure", "target", "met?"]);
    for (latency, tasks, contender, baseline, bound, tail) in goals(&results.latencies) {
        if results.trials(latency, contender, tasks).is_empty() {
            continue;
        }
        let (figure, target, met) = if tail {
            let p = |c| percentile(&results.times(latency, c, tasks), 0.999);
            let ratio = p(contender) / p(baseline);
            let (target, met) = match bound {
                Some(b) if ratio <= b => (format!("≤ {b:.2} ×"), format!("yes ({ratio:.2})")),
                Some(b) => (format!("≤ {b:.2} ×"), format!("**no** ({ratio:.2})")),
                None => ("(stated)".into(), String::new()),
            };
            (
                format!("p99.9 {ratio:.2} × {}'s", baseline.label()),
                target,
                met,
            )
        } else {
            let ratios = results.ratios(latency, contender, baseline, tasks);
            let cell = format!("{} × {}", ratio_cell(&ratios), baseline.label());
            match bound {
                Some(b) => (cell, format!("≥ {b:.2} ×"), verdict(median(&ratios), b)),
                None => (cell, "(stated)".into(), String::new()),
            }
        };
        table.row(vec![
            format!("{latency} ms"),
            tasks.to_string(),
            contender.label().into(),
            figure,
            target,
            met,
        ]);
    }
    table.print();

    for &latency in &results.latencies {
        println!("### {latency} ms added to each round trip\n");
        let mut table = Table::new(&[
            "tasks",
            "contender",
            "calls/s",
            "× plain",
            "× tutorial",
            "× Go post",
            "p50 ms",
            "p99 ms",
            "p99.9 ms",
        ]);
        for &tasks in &results.tasks {
            for &contender in &results.contenders {
                let rates = results.rates(latency, contender, tasks);
                let (lo, hi) = min_max(&rates);
                let times = results.times(latency, contender, tasks);
                let mut row = vec![
                    tasks.to_string(),
                    contender.label().into(),
                    format!("{:.0} ({lo:.0}–{hi:.0})", median(&rates)),
                ];
                for baseline in contender.baselines() {
                    row.push(match baseline {
                        Some(b) if b == contender => "1".into(),
                        Some(b) => ratio_cell(&results.ratios(latency, contender, b, tasks)),
                        None => String::new(),
                    });
                }
                for q in [0.5, 0.99, 0.999] {
                    row.push(format!("{:.2}", percentile(&times, q)));
                }
                table.row(row);
            }
        }
        table.print();
    }
}

/// A contender's colour and whether its line is dashed (the baselines, by hand or plain).
fn look(contender: Contender) -> (RGBColor, bool) {
    match contender {
        Contender::Plain => (RGBColor(0, 0, 0), true),
        Contender::Tutorial | Contender::TutorialNumber => (RGBColor(140, 140, 140), true),
        Contender::GoPost | Contender::GoPostNumber => (RGBColor(214, 39, 40), true),
        Contender::Counters | Contender::CountersNumber => (RGBColor(31, 119, 180), false),
        Contender::Optimistic => (RGBColor(255, 127, 14), false),
        Contender::Block100 | Contender::Block25Number => (RGBColor(44, 160, 44), false),
        Contender::Block100Spent => (RGBColor(23, 190, 207), false),
        Contender::Gapless => (RGBColor(148, 103, 189), false),
    }
}

/// The chart: calls per second against tasks, one panel per latency, inserts above and
/// numbers on their own below; each point the median over rounds, log scales both ways.
pub fn draw(results: &Results, path: &Path, server: &str) -> Result<(), BoxError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let (first, last) = match (results.tasks.first(), results.tasks.last()) {
        (Some(&first), Some(&last)) => (first as f64, last as f64),
        _ => return Err("no task counts to draw".into()),
    };
    let columns = results.latencies.len();
    let root = SVGBackend::new(path, (300 * columns as u32 + 280, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let server = server.split(" on ").next().unwrap_or(server);
    let caption = format!(
        "Calls per second against tasks, through a proxy that adds a round trip's delay, on {server} (medians of {} rounds)",
        results.rounds
    );
    let root = root.titled(&caption, ("sans-serif", 16))?;
    let (panels, legend) = root.split_horizontally(300 * columns as u32);
    let rows = panels.split_evenly((2, columns));
    for (kind, contenders) in [Contender::INSERTS.as_slice(), Contender::NUMBERS.as_slice()]
        .into_iter()
        .enumerate()
    {
        let drawn: Vec<Contender> = contenders
            .iter()
            .copied()
            .filter(|c| results.contenders.contains(c))
            .collect();
        for (column, &latency) in results.latencies.iter().enumerate() {
            let lines: Vec<(Contender, Vec<(f64, f64)>)> = drawn
                .iter()
                .map(|&c| {
                    let points = results
                        .tasks
                        .iter()
                        .map(|&tasks| (tasks as f64, median(&results.rates(latency, c, tasks))))
                        .filter(|&(_, rate)| rate > 0.0)
                        .collect();
                    (c, points)
                })
                .collect();
            let rates = lines.iter().flat_map(|(_, p)| p.iter().map(|&(_, r)| r));
            let (lo, hi) = rates.fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
                (lo.min(r), hi.max(r))
            });
            if !lo.is_finite() {
                continue;
            }
            let what = if kind == 0 { "inserts" } else { "numbers" };
            let mut chart = ChartBuilder::on(&rows[kind * columns + column])
                .caption(format!("{what}, +{latency} ms"), ("sans-serif", 14))
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(48)
                .build_cartesian_2d(
                    (first / 1.25..last * 1.25)
                        .log_scale()
                        .with_key_points(results.tasks.iter().map(|&t| t as f64).collect()),
                    (lo / 1.5..hi * 1.5).log_scale(),
                )?;
            chart
                .configure_mesh()
                .x_label_formatter(&|tasks| format!("{tasks:.0}"))
                .y_label_formatter(&|rate| format!("{rate:.0}"))
                .light_line_style(WHITE)
                .bold_line_style(RGBColor(225, 225, 225))
                .draw()?;
            for (contender, points) in lines {
                let (color, dashed) = look(contender);
                let style = color.stroke_width(2);
                if dashed {
                    chart.draw_series(DashedLineSeries::new(points.clone(), 6, 4, style))?;
                } else {
                    chart.draw_series(LineSeries::new(points.clone(), style))?;
                }
                chart.draw_series(points.iter().map(|&p| Circle::new(p, 2, color.filled())))?;
            }
        }
    }
    for (row, &contender) in results.contenders.iter().enumerate() {
        let (color, dashed) = look(contender);
        let y = 40 + 22 * row as i32;
        let path = if dashed {
            vec![(0, y), (8, y)]
        } else {
            vec![(0, y), (22, y)]
        };
        legend.draw(&PathElement::new(path, color.stroke_width(2)))?;
        legend.draw(&Text::new(
            contender.label(),
            (28, y - 7),
            ("sans-serif", 12),
        ))?;
    }
    root.present()?;
    Ok(())
}
