//! What the safety net of a missing counter costs (issue 39): before seqid makes a counter,
//! it checks that the collection holds none of the sequence's numbers. The first `$inc` of a
//! counter goes without the upsert; only when it finds no counter are the counter and the
//! collection read, and the upsert sent. Measured with one task inserting into `scopes` new
//! scopes of a counters sequence (a counter made per insert), then once more into each
//! (the counter known), then through a fresh handle (a restarted process: the counter
//! exists, first use through the handle), against the tutorial's upsert by hand, which
//! makes a counter without looking. Round trips per insert (commands sent) and the median
//! latency of an insert.

use std::sync::Arc;
use std::time::Instant;

use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::options::{ReturnDocument, WriteConcern};
use seqid::Document;
use seqid_harness::CommandCounter;
use serde::{Deserialize, Serialize};

use crate::Config;
use crate::model::BoxError;
use crate::stats::{Table, median};

/// Numbered per tenant: every new tenant is a new counter.
#[derive(Debug, Clone, Serialize, Deserialize, Document)]
#[seq_id(collection = "bench_first_use")]
struct Account {
    tenant: String,
    #[seq_id("bench_first_use", scope = "tenant")]
    number: i64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Trial {
    NewCounter,
    KnownCounter,
    RestartedHandle,
    ByHand,
}

impl Trial {
    const ALL: [Trial; 4] = [
        Trial::NewCounter,
        Trial::KnownCounter,
        Trial::RestartedHandle,
        Trial::ByHand,
    ];

    fn name(self) -> &'static str {
        match self {
            Trial::NewCounter => "seqid, a new scope's first insert (counter made, checked)",
            Trial::KnownCounter => "seqid, the scope's next insert (counter known)",
            Trial::RestartedHandle => "seqid, a fresh handle's first insert (counter exists)",
            Trial::ByHand => "by hand: the tutorial's upsert (w: majority) + insert, no check",
        }
    }
}

pub struct Row {
    trial: Trial,
    round_trips: f64,
    micros: Vec<f64>,
}

pub async fn run(database: &str, config: &Config) -> Result<Vec<Row>, BoxError> {
    let counter = Arc::new(CommandCounter::new());
    let client = {
        let counter = counter.clone();
        seqid_harness::client_with(move |o| o.command_event_handler = Some(counter.handler()))
            .await?
    };
    let plain = client.database(database);
    let scopes = if config.rounds > 1 { 1000 } else { 200 };
    let mut rows: Vec<Row> = Trial::ALL
        .iter()
        .map(|&trial| Row {
            trial,
            round_trips: 0.0,
            micros: Vec::new(),
        })
        .collect();
    for round in 0..config.rounds.min(3) {
        plain
            .collection::<BsonDocument>("bench_first_use")
            .drop()
            .await?;
        plain.collection::<BsonDocument>("counters").drop().await?;
        let handle = seqid::Sequences::new(&client);
        let db = handle.database(database);
        let tenant = |i: usize| format!("r{round}-t{i}");
        for trial in Trial::ALL {
            let restarted = seqid::Sequences::new(&client);
            let restarted = restarted.database(database);
            counter.reset();
            let mut micros = Vec::with_capacity(scopes);
            for i in 0..scopes {
                let mut account = Account {
                    tenant: tenant(i),
                    number: 0,
                };
                let start = Instant::now();
                match trial {
                    Trial::NewCounter | Trial::KnownCounter => {
                        account.insert(&db).await?;
                    }
                    Trial::RestartedHandle => {
                        account.insert(&restarted).await?;
                    }
                    Trial::ByHand => {
                        let by_hand = format!("by-hand-{}", tenant(i));
                        let next = plain
                            .collection::<BsonDocument>("counters")
                            .find_one_and_update(
                                doc! { "_id": &by_hand },
                                doc! { "$inc": { "seq": 1 } },
                            )
                            .upsert(true)
                            .return_document(ReturnDocument::After)
                            // As seqid's counter: an id survives a failover.
                            .write_concern(WriteConcern::majority())
                            .await?
                            .and_then(|c| c.get("seq").cloned());
                        plain
                            .collection::<BsonDocument>("bench_first_use")
                            .insert_one(doc! { "tenant": by_hand, "number": next })
                            .await?;
                    }
                }
                micros.push(start.elapsed().as_secs_f64() * 1e6);
            }
            let row = rows.iter_mut().find(|row| row.trial == trial).unwrap();
            row.round_trips = counter.total() as f64 / scopes as f64;
            row.micros.push(median(&micros));
        }
    }
    Ok(rows)
}

pub fn print(rows: &[Row]) {
    let mut table = Table::new(&["insert", "round trips per insert", "median latency (µs)"]);
    for row in rows {
        table.row(vec![
            row.trial.name().into(),
            format!("{:.2}", row.round_trips),
            format!("{:.0}", median(&row.micros)),
        ]);
    }
    table.print();
}
