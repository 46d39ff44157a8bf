//! Find-or-insert by a natural key: 16 tasks make 10,000 calls over 200 keys (drawn at
//! random, so that the first calls of a key may race), through one handle,
//! on a fresh collection per trial. For each contender: calls per second, and ids taken per
//! document stored (what the counter or the largest id says once the trial is done, over
//! the 200 documents).
//!
//! Contenders: seqid's `find_or_insert` with each strategy (gapless in a transaction of its
//! own per call, run again on a transient error); the same done by hand (`find_one`, then
//! seqid's `insert`, then `find_one` again on a duplicate key); and the anchors' way, one
//! upsert with `$setOnInsert` of an id taken from the counter first (what MongoEngine's and
//! mongoose-sequence's users are told to write: one id per call, found or not).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::options::ReturnDocument;
use seqid::action::Transaction;
use seqid::error::ErrorKind;
use seqid::{Database, Document, Model};
use serde::{Deserialize, Serialize};

use crate::Config;
use crate::model::BoxError;
use crate::stats::{Table, median, min_max};

const TASKS: usize = 16;
const KEYS: u64 = 200;
const CALLS: u64 = 10_000;

/// `keyed!(Name, "sequence", strategy...)`: `{ _id, email (the key), n }`.
macro_rules! keyed {
    ($name:ident, $($attr:tt)*) => {
        #[derive(Serialize, Deserialize, Document)]
        #[seq_id($($attr)*)]
        struct $name {
            #[serde(rename = "_id")]
            id: i64,
            #[seq_key]
            email: String,
            n: i64,
        }
    };
}

keyed!(
    Counted,
    "bench_key_counters",
    collection = "bench_key_counters"
);
keyed!(
    Blocked,
    "bench_key_block",
    collection = "bench_key_block",
    strategy = "block"
);
keyed!(
    Optimistic,
    "bench_key_optimistic",
    collection = "bench_key_optimistic",
    strategy = "optimistic"
);
keyed!(
    Gapless,
    "bench_key_gapless",
    collection = "bench_key_gapless",
    strategy = "gapless"
);
// The hand-written contender inserts with seqid's counters (no key declared).
#[derive(Serialize, Deserialize, Document)]
#[seq_id("bench_key_hand", collection = "bench_key_hand")]
struct ByHand {
    #[serde(rename = "_id")]
    id: i64,
    email: String,
    n: i64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Contender {
    Counters,
    Block,
    Optimistic,
    Gapless,
    ByHand,
    Upsert,
}

impl Contender {
    const ALL: [Contender; 6] = [
        Contender::Counters,
        Contender::Block,
        Contender::Optimistic,
        Contender::Gapless,
        Contender::ByHand,
        Contender::Upsert,
    ];

    fn name(self) -> &'static str {
        match self {
            Contender::Counters => "seqid find_or_insert, counters",
            Contender::Block => "seqid find_or_insert, block",
            Contender::Optimistic => "seqid find_or_insert, optimistic",
            Contender::Gapless => "seqid find_or_insert, gapless (a transaction per call)",
            Contender::ByHand => "by hand: find_one, insert, find_one on a duplicate key",
            Contender::Upsert => "the anchors' way: $inc, then upsert with $setOnInsert",
        }
    }

    fn collection(self) -> &'static str {
        match self {
            Contender::Counters => Counted::SEQUENCE.collection,
            Contender::Block => Blocked::SEQUENCE.collection,
            Contender::Optimistic => Optimistic::SEQUENCE.collection,
            Contender::Gapless => Gapless::SEQUENCE.collection,
            Contender::ByHand => ByHand::SEQUENCE.collection,
            Contender::Upsert => "bench_key_upsert",
        }
    }

    /// The counter's name, for those that keep one.
    fn counter(self) -> Option<&'static str> {
        match self {
            Contender::Counters => Some(Counted::SEQUENCE.name),
            Contender::Block => Some(Blocked::SEQUENCE.name),
            Contender::Optimistic => None,
            Contender::Gapless => Some(Gapless::SEQUENCE.name),
            Contender::ByHand => Some(ByHand::SEQUENCE.name),
            Contender::Upsert => Some("bench_key_upsert"),
        }
    }

    /// One call for `email`.
    async fn call(self, db: &Database, email: String, n: i64) -> Result<(), BoxError> {
        match self {
            Contender::Counters => {
                Counted { id: 0, email, n }.find_or_insert(db).await?;
            }
            Contender::Block => {
                Blocked { id: 0, email, n }.find_or_insert(db).await?;
            }
            Contender::Optimistic => {
                Optimistic { id: 0, email, n }.find_or_insert(db).await?;
            }
            Contender::Gapless => gapless(db, email, n).await?,
            Contender::ByHand => by_hand(db, email, n).await?,
            Contender::Upsert => upsert(db, email, n).await?,
        }
        Ok(())
    }
}

/// `find_or_insert` of a gapless document in a transaction of its own (`Transaction`:
/// run again on a transient error, a race lost included), and again on a duplicate key
/// (SecantusDB's answer, where MongoDB's is a write conflict).
async fn gapless(db: &Database, email: String, n: i64) -> Result<(), BoxError> {
    let mut session = db.client().start_session().await?;
    loop {
        let found = Transaction::new(&mut session)
            .run((db, &email), |session, (db, email)| {
                Box::pin(async move {
                    let mut doc = Gapless {
                        id: 0,
                        email: email.to_string(),
                        n,
                    };
                    doc.find_or_insert(*db).session(session).await
                })
            })
            .await;
        match found {
            Ok(_) => return Ok(()),
            Err(e) if matches!(e.kind(), ErrorKind::DuplicateKey { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// What users write today: look, insert with the next number, look again if another
/// request won.
async fn by_hand(db: &Database, email: String, n: i64) -> Result<(), BoxError> {
    let users = ByHand::collection(db);
    if users.find_one(doc! { "email": &email }).await?.is_some() {
        return Ok(());
    }
    let mut doc = ByHand {
        id: 0,
        email: email.clone(),
        n,
    };
    match doc.insert(db).await {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::DuplicateKey { .. }) => {
            users.find_one(doc! { "email": &email }).await?;
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// The anchors' way: a fresh id from the counter, then one upsert that sets it only if it
/// inserts (the id is taken whether the key is found or not).
async fn upsert(db: &Database, email: String, n: i64) -> Result<(), BoxError> {
    let counters = db.collection::<BsonDocument>("counters");
    let mut counter = None;
    // SecantusDB may answer a first-use upsert racing another with no document: again.
    for _ in 0..3 {
        counter = counters
            .find_one_and_update(
                doc! { "_id": "bench_key_upsert" },
                doc! { "$inc": { "seq": 1 } },
            )
            .upsert(true)
            .return_document(ReturnDocument::After)
            .await?;
        if counter.is_some() {
            break;
        }
    }
    let counter = counter.ok_or("the counter's upsert returned nothing, three times")?;
    let id = counter.get("seq").cloned().unwrap_or_default();
    db.collection::<BsonDocument>("bench_key_upsert")
        .find_one_and_update(
            doc! { "email": &email },
            doc! { "$setOnInsert": { "number": id, "n": n } },
        )
        .upsert(true)
        .return_document(ReturnDocument::After)
        .await?;
    Ok(())
}

/// Prepares a fresh collection for `contender`: dropped, its counter deleted, the key's
/// unique index made.
async fn fresh(db: &Database, contender: Contender) -> Result<(), BoxError> {
    let collection = db.collection::<BsonDocument>(contender.collection());
    collection.drop().await?;
    if let Some(counter) = contender.counter() {
        db.collection::<BsonDocument>("counters")
            .delete_one(doc! { "_id": counter })
            .await?;
    }
    let unique = mongodb::options::IndexOptions::builder()
        .unique(true)
        .build();
    let index = mongodb::IndexModel::builder()
        .keys(doc! { "email": 1 })
        .options(unique)
        .build();
    collection.create_index(index).await?;
    Ok(())
}

/// Ids taken: the counter's value, or (optimistic) the largest id.
async fn ids_taken(db: &Database, contender: Contender) -> Result<f64, BoxError> {
    let value = match contender.counter() {
        Some(name) => {
            let counter = db
                .collection::<BsonDocument>("counters")
                .find_one(doc! { "_id": name })
                .await?;
            counter.and_then(|c| c.get("seq").and_then(integer))
        }
        // Every id read (200 of them): nx-27017 orders a sort on `_id` as text.
        None => {
            use futures_util::TryStreamExt;
            let ids: Vec<BsonDocument> = db
                .collection::<BsonDocument>(contender.collection())
                .find(doc! {})
                .projection(doc! { "_id": 1 })
                .await?
                .try_collect()
                .await?;
            ids.iter()
                .filter_map(|d| d.get("_id").and_then(integer))
                .max()
        }
    };
    Ok(value.unwrap_or(0) as f64)
}

/// A well-mixed 64-bit value of `x` (splitmix64's finalizer): the keys a task draws.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn integer(value: &mongodb::bson::Bson) -> Option<i64> {
    match value {
        mongodb::bson::Bson::Int32(v) => Some(i64::from(*v)),
        mongodb::bson::Bson::Int64(v) => Some(*v),
        mongodb::bson::Bson::Double(v) => Some(*v as i64),
        _ => None,
    }
}

/// One trial: `TASKS` tasks make `calls` calls; calls per second, ids taken per document
/// stored (block: handed out, as the handle counts them; the ids reserved and left in the
/// live block are the next inserts'), and ids reserved per document.
async fn trial(
    db: &Database,
    contender: Contender,
    calls: u64,
) -> Result<(f64, f64, f64), BoxError> {
    fresh(db, contender).await?;
    // A handle of its own per trial: a block left from an earlier trial is not counted.
    let db = seqid::Sequences::new(db.client()).database(db.name());
    let next = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let handles: Vec<_> = (0..TASKS as u64)
        .map(|task| {
            let (db, next) = (db.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let call = next.fetch_add(1, Ordering::Relaxed);
                    if call >= calls {
                        return Ok::<_, BoxError>(());
                    }
                    // Each task draws keys at random (its own seeded sequence), so that
                    // the first calls of a key may come from several tasks at once.
                    let key = mix(task << 32 | call) % KEYS;
                    contender
                        .call(&db, format!("user{key}@example.com"), call as i64)
                        .await?;
                }
            })
        })
        .collect();
    for handle in handles {
        handle.await??;
    }
    let per_sec = calls as f64 / start.elapsed().as_secs_f64();
    let stored = db
        .collection::<BsonDocument>(contender.collection())
        .count_documents(doc! {})
        .await? as f64;
    let reserved = ids_taken(&db, contender).await? / stored;
    let taken = match contender {
        Contender::Block => Blocked::sequence().stats(&db).ids as f64 / stored,
        _ => reserved,
    };
    Ok((per_sec, taken, reserved))
}

pub struct Row {
    contender: Contender,
    per_sec: Vec<f64>,
    taken: Vec<f64>,
    reserved: Vec<f64>,
    ratios: Vec<f64>,
}

/// Interleaved rounds (at most 3: each trial is 10,000 calls).
pub async fn run(db: &Database, config: &Config) -> Result<Vec<Row>, BoxError> {
    let nx = seqid_harness::server_flavor()? == seqid_harness::ServerFlavor::Nx;
    // nx-27017 has no transactions to run gapless in, and ignores `$setOnInsert`.
    let contenders: Vec<Contender> = Contender::ALL
        .into_iter()
        .filter(|c| !nx || !matches!(c, Contender::Gapless | Contender::Upsert))
        .collect();
    let calls = if config.rounds > 1 { CALLS } else { CALLS / 10 };
    let mut rows: Vec<Row> = contenders
        .iter()
        .map(|&contender| Row {
            contender,
            per_sec: Vec::new(),
            taken: Vec::new(),
            reserved: Vec::new(),
            ratios: Vec::new(),
        })
        .collect();
    for round in 0..config.rounds.min(3) {
        let mut hand = f64::NAN;
        let mut per_sec = vec![f64::NAN; rows.len()];
        for k in 0..rows.len() {
            let i = (k + round) % rows.len();
            let (rate, taken, reserved) = trial(db, rows[i].contender, calls).await?;
            rows[i].per_sec.push(rate);
            rows[i].taken.push(taken);
            rows[i].reserved.push(reserved);
            per_sec[i] = rate;
            if rows[i].contender == Contender::ByHand {
                hand = rate;
            }
        }
        for (row, rate) in rows.iter_mut().zip(per_sec) {
            row.ratios.push(rate / hand);
        }
    }
    Ok(rows)
}

pub fn print(rows: &[Row]) {
    let mut table = Table::new(&[
        "contender",
        "calls/s",
        "× by hand",
        "ids taken per document stored",
        "ids reserved per document",
    ]);
    for row in rows {
        let (lo, hi) = min_max(&row.taken);
        table.row(vec![
            row.contender.name().into(),
            format!("{:.0}", median(&row.per_sec)),
            crate::stats::ratio_cell(&row.ratios),
            format!("{:.2} ({lo:.2}–{hi:.2})", median(&row.taken)),
            format!("{:.2}", median(&row.reserved)),
        ]);
    }
    table.print();
}
