//! Numbering stored drafts when they are issued (`numbered = "later"`): drafts numbered per
//! second by 1 and 16 issuers, each draft numbered by one `number_draft` call, for counters
//! and gapless (gapless in a transaction of its own per draft, with the change that issues
//! it, run again on a transient error), against the same change made by a plain
//! `update_one` (the reference: what issuing costs without a number). Fresh collections per
//! trial; the drafts are stored before the clock starts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use mongodb::bson::oid::ObjectId;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::action::Transaction;
use seqid::{Database, Document, Model};
use serde::{Deserialize, Serialize};

use crate::Config;
use crate::model::BoxError;
use crate::stats::{Table, median, ratio_cell};

/// `draft!(Name, "collection", [seq_id of the number])`.
macro_rules! draft {
    ($name:ident, $collection:literal, [$($attr:tt)*]) => {
        #[derive(Serialize, Deserialize, Document)]
        #[seq_id(collection = $collection)]
        struct $name {
            #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
            id: Option<ObjectId>,
            year: i32,
            #[seq_id($($attr)*)]
            number: Option<i64>,
            #[seq_display("INV-{year}-{number:05}")]
            code: String,
            status: String,
        }
    };
}

draft!(
    Counted,
    "bench_drafts_counters",
    ["bench_drafts_counters", scope = "year", numbered = "later"]
);
draft!(
    Gapless,
    "bench_drafts_gapless",
    [
        "bench_drafts_gapless",
        scope = "year",
        strategy = "gapless",
        numbered = "later"
    ]
);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Contender {
    Plain,
    Counters,
    Gapless,
}

impl Contender {
    const ALL: [Contender; 3] = [Contender::Plain, Contender::Counters, Contender::Gapless];

    fn name(self) -> &'static str {
        match self {
            Contender::Plain => "plain update_one of the status (no number)",
            Contender::Counters => "seqid number_draft, counters",
            Contender::Gapless => "seqid number_draft, gapless (a transaction per draft)",
        }
    }

    fn collection(self) -> &'static str {
        match self {
            Contender::Plain | Contender::Counters => Counted::SEQUENCE.collection,
            Contender::Gapless => Gapless::SEQUENCE.collection,
        }
    }

    /// Issues the draft `id`.
    async fn issue(self, db: &Database, id: ObjectId) -> Result<(), BoxError> {
        let issued = doc! { "status": "issued" };
        match self {
            Contender::Plain => {
                db.collection::<BsonDocument>(self.collection())
                    .update_one(doc! { "_id": id }, doc! { "$set": issued })
                    .await?;
            }
            Contender::Counters => {
                Counted::number_draft(db, doc! { "_id": id })
                    .set(issued)
                    .await?;
            }
            Contender::Gapless => {
                let mut session = db.client().start_session().await?;
                Transaction::new(&mut session)
                    .run((db, &issued), |session, (db, issued)| {
                        Box::pin(async move {
                            Gapless::number_draft(*db, doc! { "_id": id })
                                .set(issued.clone())
                                .session(session)
                                .await
                        })
                    })
                    .await?;
            }
        }
        Ok(())
    }
}

/// Stores `count` drafts in a fresh collection for `contender` (its counter deleted), and
/// returns their `_id`s.
async fn fresh(
    db: &Database,
    contender: Contender,
    count: usize,
) -> Result<Vec<ObjectId>, BoxError> {
    let collection = db.collection::<BsonDocument>(contender.collection());
    collection.drop().await?;
    db.collection::<BsonDocument>("counters")
        .delete_many(
            doc! { "sequence": { "$in": ["bench_drafts_counters", "bench_drafts_gapless"] } },
        )
        .await?;
    match contender {
        Contender::Gapless => Gapless::create_indexes(db).await?,
        _ => Counted::create_indexes(db).await?,
    };
    let drafts: Vec<BsonDocument> = (0..count)
        .map(|_| doc! { "year": 2026, "code": "", "status": "draft" })
        .collect();
    let inserted = collection.insert_many(drafts).await?;
    let mut ids: Vec<(usize, ObjectId)> = inserted
        .inserted_ids
        .into_iter()
        .filter_map(|(at, id)| match id {
            Bson::ObjectId(id) => Some((at, id)),
            _ => None,
        })
        .collect();
    ids.sort_unstable();
    Ok(ids.into_iter().map(|(_, id)| id).collect())
}

/// One trial: `issuers` tasks issue `count` drafts between them; drafts per second.
async fn trial(
    db: &Database,
    contender: Contender,
    issuers: usize,
    count: usize,
) -> Result<f64, BoxError> {
    let drafts = Arc::new(fresh(db, contender, count).await?);
    let db = seqid::Sequences::new(db.client()).database(db.name());
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let handles: Vec<_> = (0..issuers)
        .map(|_| {
            let (db, next, drafts) = (db.clone(), next.clone(), drafts.clone());
            tokio::spawn(async move {
                loop {
                    let at = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&id) = drafts.get(at) else {
                        return Ok::<_, BoxError>(());
                    };
                    contender.issue(&db, id).await?;
                }
            })
        })
        .collect();
    for handle in handles {
        handle.await??;
    }
    Ok(count as f64 / start.elapsed().as_secs_f64())
}

pub struct Row {
    issuers: usize,
    contender: Contender,
    per_sec: Vec<f64>,
    ratios: Vec<f64>,
}

/// Interleaved rounds at 1 and 16 issuers.
pub async fn run(db: &Database, config: &Config) -> Result<Option<Vec<Row>>, BoxError> {
    if seqid_harness::server_flavor()? == seqid_harness::ServerFlavor::Nx {
        // No transactions to run gapless in, and partial indexes listed as whole ones.
        return Ok(None);
    }
    let count = if config.rounds > 1 { 1000 } else { 100 };
    let mut rows = Vec::new();
    for issuers in [1, 16] {
        let mut by = Contender::ALL.map(|contender| Row {
            issuers,
            contender,
            per_sec: Vec::new(),
            ratios: Vec::new(),
        });
        for round in 0..config.rounds.min(3) {
            let mut plain = f64::NAN;
            for k in 0..Contender::ALL.len() {
                let i = (k + round) % Contender::ALL.len();
                let per_sec = trial(db, Contender::ALL[i], issuers, count).await?;
                by[i].per_sec.push(per_sec);
                if Contender::ALL[i] == Contender::Plain {
                    plain = per_sec;
                }
            }
            for row in &mut by {
                let last = *row.per_sec.last().unwrap_or(&f64::NAN);
                row.ratios.push(last / plain);
            }
        }
        rows.extend(by);
    }
    Ok(Some(rows))
}

pub fn print(rows: &Option<Vec<Row>>) {
    let Some(rows) = rows else {
        println!(
            "Not run: this server has no transactions to number gapless drafts in (nx-27017).\n"
        );
        return;
    };
    let mut table = Table::new(&["issuers", "contender", "drafts issued/s", "× plain update"]);
    for row in rows {
        table.row(vec![
            row.issuers.to_string(),
            row.contender.name().into(),
            format!("{:.0}", median(&row.per_sec)),
            ratio_cell(&row.ratios),
        ]);
    }
    table.print();
}
