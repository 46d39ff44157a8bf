//! Bulk: 10,000 documents in one call per strategy, against a plain `insert_many` of the
//! same documents with driver-generated ObjectIds. Every trial starts with an empty
//! collection; the strategies are interleaved over rounds.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use mongodb::bson::Document as BsonDocument;
use seqid::Database;
use seqid::{Document, Model};

use crate::Config;
use crate::cost::{heap_in_use, peak, reset_peak};
use crate::model::{
    BoxError, BulkBlock10Doc, BulkBlock100Doc, BulkCountersDoc, BulkOptimisticDoc, Make, PlainDoc,
};
use crate::probe::{Monitor, Snapshot};
use crate::stats::{Table, median, ratio_cell, verdict};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bulk {
    Plain,
    Counters,
    Optimistic,
    Block10,
    Block100,
}

impl Bulk {
    const ALL: [Bulk; 5] = [
        Bulk::Plain,
        Bulk::Counters,
        Bulk::Optimistic,
        Bulk::Block10,
        Bulk::Block100,
    ];

    fn label(self) -> &'static str {
        match self {
            Bulk::Plain => "plain insert_many (ObjectId)",
            Bulk::Counters => "seqid counters insert_many",
            Bulk::Optimistic => "seqid optimistic insert_many",
            Bulk::Block10 => "seqid block 10 insert_many",
            Bulk::Block100 => "seqid block 100 insert_many",
        }
    }

    fn collection(self) -> &'static str {
        match self {
            Bulk::Plain => "bulk_plain",
            Bulk::Counters => BulkCountersDoc::SEQUENCE.collection,
            Bulk::Optimistic => BulkOptimisticDoc::SEQUENCE.collection,
            Bulk::Block10 => BulkBlock10Doc::SEQUENCE.collection,
            Bulk::Block100 => BulkBlock100Doc::SEQUENCE.collection,
        }
    }
}

fn docs<T: Make>(count: usize) -> Vec<T> {
    (0..count)
        .map(|n| T::make(&format!("bulk {}", n % 64), n as i32))
        .collect()
}

/// What one call took: its time, and the most heap it held at once beyond the documents
/// it was given (building them is neither timed nor counted).
struct Call {
    elapsed: Duration,
    peak_bytes: u64,
}

/// Starts a call's measures once its documents are built.
fn begin() -> (Instant, u64) {
    let base = heap_in_use();
    reset_peak();
    (Instant::now(), base)
}

fn end((start, base): (Instant, u64)) -> Call {
    Call {
        elapsed: start.elapsed(),
        peak_bytes: peak().saturating_sub(base),
    }
}

/// `T::insert_many` of `count` fresh documents.
async fn seqid_bulk<T: Document + Make>(db: &Database, count: usize) -> Result<Call, BoxError> {
    let mut batch = docs::<T>(count);
    let started = begin();
    let ids = T::insert_many(&mut batch, db).await?;
    let call = end(started);
    assert_eq!(ids.len(), count);
    Ok(call)
}

async fn bulk_trial(db: &Database, which: Bulk, count: usize) -> Result<Call, BoxError> {
    match which {
        Bulk::Plain => {
            let batch = docs::<PlainDoc>(count);
            let started = begin();
            db.collection::<PlainDoc>(which.collection())
                .insert_many(&batch)
                .await?;
            Ok(end(started))
        }
        Bulk::Counters => seqid_bulk::<BulkCountersDoc>(db, count).await,
        Bulk::Optimistic => seqid_bulk::<BulkOptimisticDoc>(db, count).await,
        Bulk::Block10 => seqid_bulk::<BulkBlock10Doc>(db, count).await,
        Bulk::Block100 => seqid_bulk::<BulkBlock100Doc>(db, count).await,
    }
}

pub struct BulkTrial {
    elapsed: Duration,
    peak_bytes: u64,
    usage: Snapshot,
}

pub type BulkResults = BTreeMap<Bulk, Vec<BulkTrial>>;

pub async fn run(
    db: &Database,
    monitor: &Monitor,
    server_pid: Option<u32>,
    config: &Config,
) -> Result<BulkResults, BoxError> {
    let mut results = BulkResults::new();
    for round in 0..config.bulk_rounds {
        let mut order = Bulk::ALL;
        order.rotate_left(round % Bulk::ALL.len());
        for which in order {
            let collection = db.collection::<BsonDocument>(which.collection());
            collection.drop().await?;
            let before = monitor.snapshot(server_pid);
            let Call {
                elapsed,
                peak_bytes,
            } = bulk_trial(db, which, config.bulk_docs).await?;
            let usage = before.delta(&monitor.snapshot(server_pid));
            let stored = collection.estimated_document_count().await?;
            assert_eq!(stored, config.bulk_docs as u64, "{}", which.label());
            results.entry(which).or_default().push(BulkTrial {
                elapsed,
                peak_bytes,
                usage,
            });
        }
        eprintln!("  bulk round {}/{} done", round + 1, config.bulk_rounds);
    }
    for which in Bulk::ALL {
        db.collection::<BsonDocument>(which.collection())
            .drop()
            .await?;
    }
    Ok(results)
}

pub fn print(results: &BulkResults, config: &Config) {
    let mut table = Table::new(&[
        "contender",
        "docs/s",
        "ms per call",
        "round trips (commands)",
        "server CPU ms",
        "peak heap beyond the documents, MB",
        "× plain insert_many",
        "target",
        "met?",
    ]);
    let plain = &results[&Bulk::Plain];
    for which in Bulk::ALL {
        let trials = &results[&which];
        let secs: Vec<f64> = trials.iter().map(|t| t.elapsed.as_secs_f64()).collect();
        let rate: Vec<f64> = secs.iter().map(|s| config.bulk_docs as f64 / s).collect();
        let ratios: Vec<f64> = trials
            .iter()
            .zip(plain)
            .map(|(t, p)| p.elapsed.as_secs_f64() / t.elapsed.as_secs_f64())
            .collect();
        let cpu: Vec<f64> = trials
            .iter()
            .map(|t| {
                t.usage
                    .server_cpu
                    .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
            })
            .collect();
        let last = trials.last().expect("at least one round");
        let (target, met) = if which == Bulk::Plain {
            (String::new(), String::new())
        } else {
            ("≥ 0.90".into(), verdict(median(&ratios), 0.90))
        };
        table.row(vec![
            which.label().into(),
            format!("{:.0}", median(&rate)),
            format!("{:.0}", median(&secs) * 1e3),
            format!(
                "{} ({})",
                last.usage.commands,
                last.usage.commands_by_name()
            ),
            format!("{:.0}", median(&cpu)),
            format!(
                "{:.1}",
                median(
                    &trials
                        .iter()
                        .map(|t| t.peak_bytes as f64 / 1e6)
                        .collect::<Vec<_>>()
                )
            ),
            if which == Bulk::Plain {
                "1".into()
            } else {
                ratio_cell(&ratios)
            },
            target,
            met,
        ]);
    }
    table.print();
}
