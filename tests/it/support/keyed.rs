//! Models with a natural key (`#[seq_key] email`), and callers of `find_or_insert` racing
//! over a few keys, shared by `tests/it/natural.rs` and the worker processes it starts
//! (`tests/bin/worker.rs`, mode `keyed/<model>/<via>`).
//!
//! Every model holds the caller that made the document (`caller`): with unique content a
//! caller's own name, so that a document shows who stored it; with equal content the
//! empty string for every caller of a key, so that nothing in a document tells one
//! caller's from another's, and a caller may only be told `Inserted` by the server's
//! acknowledgement of its own write.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use mongodb::bson::oid::ObjectId;
use seqid::error::ErrorKind;
use seqid::kind::NaturalKeyed;
use seqid::{Document, Entry, Error};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::writers::Via;

/// A model whose documents are found by their `email`.
pub trait Keyed:
    Document + NaturalKeyed + DeserializeOwned + Clone + PartialEq + Debug + Send + Sync + 'static
{
    /// The name a worker process knows it by.
    const NAME: &'static str;

    /// A document of key `email`, made by `caller`.
    fn make(email: String, caller: String) -> Self;

    fn email(&self) -> &str;

    fn caller(&self) -> &str;

    /// The primary sequence's number, once filled.
    fn number(&self) -> Option<i64>;
}

/// `keyed_model!(Name = "name", [seq_id attribute])`: `{ _id: i64, email, caller }`.
macro_rules! keyed_model {
    ($name:ident = $model:literal, [$($attr:tt)*]) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
        #[seq_id($($attr)*)]
        pub struct $name {
            #[serde(rename = "_id")]
            pub id: i64,
            #[seq_key]
            pub email: String,
            pub caller: String,
        }

        impl Keyed for $name {
            const NAME: &'static str = $model;

            fn make(email: String, caller: String) -> Self {
                $name { id: 0, email, caller }
            }

            fn email(&self) -> &str {
                &self.email
            }

            fn caller(&self) -> &str {
                &self.caller
            }

            fn number(&self) -> Option<i64> {
                (self.id != 0).then_some(self.id)
            }
        }
    };
}

keyed_model!(
    KeyedCounters = "keyed-counters",
    ["keyed_counters", collection = "keyed_counters"]
);
keyed_model!(
    KeyedBlock = "keyed-block",
    [
        "keyed_block",
        collection = "keyed_block",
        strategy = "block",
        block_size = 10
    ]
);
keyed_model!(
    KeyedOptimistic = "keyed-optimistic",
    [
        "keyed_opt",
        collection = "keyed_opt",
        strategy = "optimistic"
    ]
);
keyed_model!(
    KeyedGapless = "keyed-gapless",
    [
        "keyed_gapless",
        collection = "keyed_gapless",
        strategy = "gapless"
    ]
);
// Another tool's counter: mongoose-sequence's layout, its step and start.
keyed_model!(
    KeyedMongoose = "keyed-mongoose",
    [
        "keyed_ms",
        collection = "keyed_ms",
        layout = "mongoose-sequence",
        step = 5,
        start = 10
    ]
);

/// Several sequences, a scope and a display code: a global id, a number per repository
/// (the repository follows the key) from a block, and its code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
#[seq_id("keyed_issue", collection = "keyed_issues")]
pub struct KeyedIssue {
    #[serde(rename = "_id")]
    pub id: i64,
    #[seq_key]
    pub email: String,
    pub caller: String,
    pub repo: String,
    #[seq_id(
        "keyed_issue_number",
        scope = "repo",
        strategy = "block",
        block_size = 4
    )]
    pub number: i64,
    #[seq_display("{repo}#{number}")]
    pub code: String,
}

impl Keyed for KeyedIssue {
    const NAME: &'static str = "keyed-issue";

    fn make(email: String, caller: String) -> Self {
        let repo = format!("r{}", email.len() % 2);
        KeyedIssue {
            id: 0,
            email,
            caller,
            repo,
            number: 0,
            code: String::new(),
        }
    }

    fn email(&self) -> &str {
        &self.email
    }

    fn caller(&self) -> &str {
        &self.caller
    }

    fn number(&self) -> Option<i64> {
        (self.id != 0).then_some(self.id)
    }
}

/// A sequence on a field, per project, beside an `_id` the insert makes; the key is the
/// project and the email together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "keyed_tickets")]
pub struct KeyedTicket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    pub id: Option<ObjectId>,
    #[seq_key]
    pub project: String,
    #[seq_key]
    pub email: String,
    pub caller: String,
    #[seq_id("keyed_ticket", scope = "project", strategy = "optimistic")]
    pub number: i64,
}

impl Keyed for KeyedTicket {
    const NAME: &'static str = "keyed-ticket";

    fn make(email: String, caller: String) -> Self {
        KeyedTicket {
            id: None,
            project: format!("p{}", email.len() % 2),
            email,
            caller,
            number: 0,
        }
    }

    fn email(&self) -> &str {
        &self.email
    }

    fn caller(&self) -> &str {
        &self.caller
    }

    fn number(&self) -> Option<i64> {
        (self.number != 0).then_some(self.number)
    }
}

/// The email of key `k` (of varied lengths, so that the scoped models spread over two
/// scopes).
pub fn email_of(k: u32) -> String {
    format!("user{k}@example.com")
}

/// What one call was told, and the document it held after it.
#[derive(Clone, Debug)]
pub struct Called<T> {
    pub key: u32,
    /// The caller's own name (what it wrote into `caller` with unique content).
    pub caller: String,
    pub entry: Entry,
    pub doc: T,
    /// The primary number the document held when one of its calls was cut short
    /// (cancelled, or its outcome unknown), if any: that call may have stored it.
    pub cut: Option<i64>,
}

/// `find_or_insert` of `doc` through `via`; with `content_is_unique`, the caller asserts
/// that equal content is its own (true of unique content).
pub async fn find_or_insert<T: Keyed>(
    via: &Via,
    doc: &mut T,
    content_is_unique: bool,
) -> Result<Entry, Error> {
    match (via, content_is_unique) {
        (Via::Handle(db), true) => doc.find_or_insert(db).content_is_unique().await,
        (Via::Handle(db), false) => doc.find_or_insert(db).await,
        (Via::Bare(db), true) => doc.find_or_insert(db).content_is_unique().await,
        (Via::Bare(db), false) => doc.find_or_insert(db).await,
    }
}

/// `find_or_insert` of `doc` until it is known what became of it: an outcome left unknown
/// (a lost answer) is settled by calling again with the same document, as the guide says.
/// Returns the entry, how many calls were made again, and the number the document held
/// when a call was first cut short (`cut`, given if a call before this one was).
pub async fn settled<T: Keyed>(
    via: &Via,
    doc: &mut T,
    content_is_unique: bool,
    mut cut: Option<i64>,
) -> Result<(Entry, u32, Option<i64>), Error> {
    let mut again = 0;
    loop {
        match find_or_insert(via, doc, content_is_unique).await {
            Err(error)
                if matches!(error.kind(), ErrorKind::OutcomeUnknown { .. }) && again < 200 =>
            {
                cut = cut.or(doc.number());
                again += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // Nothing stored by this call: server selection during an outage (nothing was
            // sent), or the race lost and the winner's read failed (the guide, "Lost
            // answers"), the document keeping the id it was refused under.
            Err(error) if matches!(error.kind(), ErrorKind::Driver { .. }) && again < 200 => {
                again += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => return other.map(|entry| (entry, again, cut)),
        }
    }
}

/// `tasks` tasks of writer `label`, each calling `find_or_insert` once for every key
/// `0..keys`, all tasks on the same key at once (they wait for one another before each
/// key). With `unique`, each call's document names its caller, and the caller asserts
/// `content_is_unique`; else every caller's document of a key is the same. Returns every call, and how many outcomes were settled
/// by calling again.
pub async fn race<T: Keyed>(
    via: &Via,
    label: &str,
    tasks: usize,
    keys: u32,
    unique: bool,
) -> (Vec<Called<T>>, u32) {
    let barrier = Arc::new(tokio::sync::Barrier::new(tasks));
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (via, barrier, label) = (via.clone(), barrier.clone(), label.to_owned());
            tokio::spawn(async move {
                let mut calls = Vec::new();
                let mut resumed = 0;
                for key in 0..keys {
                    barrier.wait().await;
                    let caller = format!("{label}-{task}-{key}");
                    let content = if unique {
                        caller.clone()
                    } else {
                        String::new()
                    };
                    let mut doc = T::make(email_of(key), content);
                    let (entry, again, cut) = settled(&via, &mut doc, unique, None)
                        .await
                        .unwrap_or_else(|e| panic!("{caller}: {e}"));
                    resumed += again;
                    calls.push(Called {
                        key,
                        caller,
                        entry,
                        doc,
                        cut,
                    });
                }
                (calls, resumed)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut resumed = 0;
    for (calls, again) in super::writers::joined(handles, "the callers").await {
        all.extend(calls);
        resumed += again;
    }
    (all, resumed)
}

/// A call as a worker prints it: `keyed <key> <inserted|found> <caller> <cut or -> <the document's
/// BSON, in hex>` (BSON, so that the parent compares the very values the worker held).
// Used by the worker processes only.
#[allow(dead_code)]
pub fn print<T: Keyed>(call: &Called<T>) -> String {
    let entry = match call.entry {
        Entry::Inserted => "inserted",
        Entry::Found => "found",
    };
    let bytes = mongodb::bson::to_vec(&call.doc).expect("a model serializes");
    let hex = super::writers::to_hex(&bytes);
    let cut = call.cut.map_or_else(|| "-".to_owned(), |id| id.to_string());
    format!("keyed {} {entry} {} {cut} {hex}", call.key, call.caller)
}

/// A line [`print()`] wrote, read back.
pub fn parse<T: Keyed>(line: &str) -> Option<Called<T>> {
    let rest = line.strip_prefix("keyed ")?;
    let mut parts = rest.splitn(5, ' ');
    let key = parts.next()?.parse().ok()?;
    let entry = match parts.next()? {
        "inserted" => Entry::Inserted,
        "found" => Entry::Found,
        _ => return None,
    };
    let caller = parts.next()?.to_owned();
    let cut = match parts.next()? {
        "-" => None,
        id => Some(id.parse().ok()?),
    };
    let hex = parts.next()?;
    let bytes = super::writers::from_hex(hex)?;
    let doc = mongodb::bson::from_slice(&bytes).ok()?;
    Some(Called {
        key,
        caller,
        entry,
        doc,
        cut,
    })
}

/// `find_or_insert_many` of `docs` through `via`.
pub async fn find_or_insert_many<T: Keyed>(
    via: &Via,
    docs: &mut [T],
    content_is_unique: bool,
) -> Result<Vec<Entry>, Error> {
    match (via, content_is_unique) {
        (Via::Handle(db), true) => T::find_or_insert_many(docs, db).content_is_unique().await,
        (Via::Handle(db), false) => T::find_or_insert_many(docs, db).await,
        (Via::Bare(db), true) => T::find_or_insert_many(docs, db).content_is_unique().await,
        (Via::Bare(db), false) => T::find_or_insert_many(docs, db).await,
    }
}

/// `find_or_insert_many` of `docs` until every document is settled: a call that leaves
/// some unknown or failed ([`ErrorKind::Bulk`]) is made again with the same slice. Returns
/// the entries, how many calls were made again, and for each document the number it held
/// when a call first left it unknown.
pub async fn settled_many<T: Keyed>(
    via: &Via,
    docs: &mut [T],
    content_is_unique: bool,
) -> Result<(Vec<Entry>, u32, Vec<Option<i64>>), Error> {
    let mut cut = vec![None; docs.len()];
    let mut again = 0;
    loop {
        let result = find_or_insert_many(via, docs, content_is_unique).await;
        match result.as_ref().map_err(Error::kind) {
            Err(ErrorKind::Bulk(bulk)) if again < 200 => {
                for &position in &bulk.unknown {
                    cut[position] = cut[position].or(docs[position].number());
                }
                again += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(ErrorKind::Driver { .. } | ErrorKind::OutcomeUnknown { .. }) if again < 200 => {
                again += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            _ => return result.map(|entries| (entries, again, cut)),
        }
    }
}

/// [`race`] with `find_or_insert_many`: in each round, every task asks for the same
/// `per_call` new keys at once, each task in an order of its own (and task 0 for the
/// round's first key twice), until `keys` keys.
pub async fn race_many<T: Keyed>(
    via: &Via,
    label: &str,
    tasks: usize,
    keys: u32,
    per_call: u32,
    unique: bool,
) -> (Vec<Called<T>>, u32) {
    let barrier = Arc::new(tokio::sync::Barrier::new(tasks));
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (via, barrier, label) = (via.clone(), barrier.clone(), label.to_owned());
            tokio::spawn(async move {
                let mut calls = Vec::new();
                let mut again = 0;
                for first in (0..keys).step_by(per_call as usize) {
                    let mut round: Vec<u32> = (first..keys.min(first + per_call)).collect();
                    let turn = task % round.len();
                    round.rotate_left(turn);
                    if task == 0 {
                        round.push(first);
                    }
                    barrier.wait().await;
                    let callers: Vec<String> = (0..round.len())
                        .map(|at| format!("{label}-{task}-{first}-{at}"))
                        .collect();
                    let mut docs: Vec<T> = round
                        .iter()
                        .zip(&callers)
                        .map(|(&key, caller)| {
                            let content = if unique {
                                caller.clone()
                            } else {
                                String::new()
                            };
                            T::make(email_of(key), content)
                        })
                        .collect();
                    let (entries, made, cut) = settled_many(&via, &mut docs, unique)
                        .await
                        .unwrap_or_else(|e| panic!("{label}-{task}-{first}: {e}"));
                    again += made;
                    let each = round
                        .into_iter()
                        .zip(callers)
                        .zip(entries)
                        .zip(docs)
                        .zip(cut);
                    for ((((key, caller), entry), doc), cut) in each {
                        calls.push(Called {
                            key,
                            caller,
                            entry,
                            doc,
                            cut,
                        });
                    }
                }
                (calls, again)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut again = 0;
    for (calls, made) in super::writers::joined(handles, "the callers").await {
        all.extend(calls);
        again += made;
    }
    (all, again)
}
