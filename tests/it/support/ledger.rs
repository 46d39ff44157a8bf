//! What writers were told, held against what is stored, for unique and for equal
//! documents alike; and the writers' loop that drives every document to an end the way
//! the README says (resume what carries an id, insert again what does not).
//!
//! The check is by count and by id: no id acknowledged twice; every acknowledged id holds
//! a document of the writer told so; each writer has as many documents stored as
//! acknowledged (where faults leave outcomes unknown, at most that many more); each
//! writer's count exact. With unique documents it is also by content: each acknowledged
//! id holds exactly the document told, no document is acknowledged or stored twice, and
//! with no outcome unknown, what is stored is exactly what was acknowledged.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use mongodb::bson::Bson;
use seqid::error::ErrorKind;
use seqid::{Document, Error, Strategy};

use super::faults::{pause, variant};
use super::models::Model;
use super::writers::{Line, Op, Via, number_of, scope_of};
use super::{all_documents, assert_dense, integer, one_to};

/// One acknowledgement: `(scope, id, writer, n)` (`""` is the scope of an unscoped
/// sequence).
pub type Ack = (String, i64, String, u32);

/// What the writers were told, and what they could not learn.
#[derive(Default, Debug)]
pub struct Told {
    /// One per document a call was told is stored.
    pub acked: Vec<Ack>,
    /// Per writer, the documents whose outcome stayed unknown.
    pub unknown: BTreeMap<String, usize>,
    /// Counter upserts retried by the handles (see `support::assert_dense`).
    pub retries: u64,
}

impl Told {
    /// Adds what the calls of a writer of `T` were told.
    pub fn add<T: Document>(&mut self, lines: Vec<Line>) {
        self.acked.extend(
            lines
                .into_iter()
                .map(|(id, writer, n)| (scope_of::<T>(n), id, writer, n)),
        );
    }

    fn acked_by(&self, writer: &str) -> usize {
        self.acked
            .iter()
            .filter(|(_, _, by, _)| by == writer)
            .count()
    }

    fn unknown_of(&self, writer: &str) -> usize {
        self.unknown.get(writer).copied().unwrap_or(0)
    }
}

/// Whether `writer` belongs to writer group `group`: it is the group, or one of its tasks
/// (`group-task`, see `writers::task_writer`).
fn in_group(writer: &str, group: &str) -> bool {
    writer == group
        || writer
            .strip_prefix(group)
            .is_some_and(|rest| rest.starts_with('-'))
}

/// A stored document: its writer, and its `n` (unique documents only).
pub type Held = (String, Option<u32>);

/// The stored documents of `T`'s collection, `(scope, id) -> (writer, n)`; a string `_id`
/// (the seed that nx-27017 needs, see `support::seed_string_id`) is passed over.
pub async fn stored<T: Document>(db: &mongodb::Database) -> BTreeMap<(String, i64), Held> {
    let seq = T::SEQUENCE;
    let mut stored = BTreeMap::new();
    for d in all_documents(db, seq.collection).await {
        if matches!(d.get("_id"), Some(Bson::String(_))) {
            continue;
        }
        let scope = match seq.scope.first() {
            Some(field) => d.get_str(field).unwrap().to_owned(),
            None => String::new(),
        };
        let id = d
            .get(seq.field)
            .and_then(integer)
            .unwrap_or_else(|| panic!("no integer {} in {d}", seq.field));
        let writer = d
            .get_str("writer")
            .unwrap_or_else(|_| panic!("no writer in {d}"));
        // `n` is a u32, which serde stores as an Int64; nx-27017 hands small Int64 values
        // back as Int32, so either type is read.
        let n = d.get("n").map(|n| {
            integer(n)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or_else(|| panic!("unexpected n in {d}"))
        });
        if let Some(first) = stored.insert((scope.clone(), id), (writer.to_owned(), n)) {
            panic!("{scope}/{id} stored twice: {first:?} and {writer}");
        }
    }
    stored
}

/// Holds `T`'s collection to what the writers were told (see the module's docs); each
/// writer group in `expected` wrote exactly that many documents (acknowledged or
/// unknown). Returns the acknowledged ids of each scope.
pub async fn check<T: Model>(
    db: &mongodb::Database,
    told: &Told,
    expected: &[(&str, usize)],
) -> BTreeMap<String, BTreeSet<i64>> {
    let stored = stored::<T>(db).await;
    let mut problems = Vec::new();
    let mut told_at: BTreeMap<(String, i64), Vec<(&str, u32)>> = BTreeMap::new();
    for (scope, id, by, n) in &told.acked {
        told_at
            .entry((scope.clone(), *id))
            .or_default()
            .push((by, *n));
    }
    let twice: Vec<_> = told_at.iter().filter(|(_, by)| by.len() > 1).collect();
    if !twice.is_empty() {
        problems.push(format!(
            "{} ids acknowledged more than once: {} acknowledgements for {} distinct ids; \
             e.g. {:?}",
            twice.len(),
            told.acked.len(),
            told_at.len(),
            twice.iter().take(5).collect::<Vec<_>>()
        ));
    }
    // The document each acknowledgement names: its writer, and for unique documents its
    // `n` too.
    let named = |by: &str, n: u32| (by.to_owned(), T::UNIQUE.then_some(n));
    let wrong: Vec<_> = told_at
        .iter()
        .flat_map(|(key, told)| told.iter().map(move |told| (key, told)))
        .filter(|(key, (by, n))| stored.get(*key) != Some(&named(by, *n)))
        .map(|(key, by)| format!("{by:?} told {key:?}, which holds {:?}", stored.get(key)))
        .collect();
    if !wrong.is_empty() {
        problems.push(format!(
            "{} acknowledged ids do not hold the document told; e.g. {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(5)]
        ));
    }
    if T::UNIQUE {
        // A document acknowledged twice, or stored under two ids.
        let mut acked: BTreeMap<(&str, u32), Vec<i64>> = BTreeMap::new();
        for (_, id, by, n) in &told.acked {
            acked.entry((by, *n)).or_default().push(*id);
        }
        let acked_twice: Vec<_> = acked.iter().filter(|(_, ids)| ids.len() > 1).collect();
        if !acked_twice.is_empty() {
            problems.push(format!("documents acknowledged twice: {acked_twice:?}"));
        }
        let mut copies: BTreeMap<&Held, Vec<&(String, i64)>> = BTreeMap::new();
        for (key, held) in &stored {
            copies.entry(held).or_default().push(key);
        }
        let stored_twice: Vec<_> = copies.iter().filter(|(_, at)| at.len() > 1).collect();
        if !stored_twice.is_empty() {
            problems.push(format!("documents stored twice: {stored_twice:?}"));
        }
    }
    let writers: BTreeSet<&str> = told
        .acked
        .iter()
        .map(|(_, _, by, _)| by.as_str())
        .chain(stored.values().map(|(by, _)| by.as_str()))
        .collect();
    let mut summary = Vec::new();
    for writer in writers {
        let acked = told.acked_by(writer);
        let unknown = told.unknown_of(writer);
        let kept = stored.values().filter(|(by, _)| by == writer).count();
        if !T::UNIQUE || unknown > 0 {
            summary.push(format!(
                "{writer}: {acked} acknowledged, {kept} stored, {unknown} unknown"
            ));
        }
        if kept < acked || kept > acked + unknown {
            let unacked: Vec<_> = stored
                .iter()
                .filter(|(key, (by, _))| by == writer && !told_at.contains_key(*key))
                .map(|(key, _)| key)
                .collect();
            problems.push(format!(
                "{writer}: {acked} acknowledged and {unknown} unknown, but {kept} stored; \
                 stored unacknowledged: {unacked:?}"
            ));
        }
    }
    for (group, n) in expected {
        let acked = told
            .acked
            .iter()
            .filter(|(_, _, by, _)| in_group(by, group))
            .count();
        let unknown: usize = told
            .unknown
            .iter()
            .filter(|(by, _)| in_group(by, group))
            .map(|(_, n)| n)
            .sum();
        summary.push(format!("{group}: {acked} acknowledged, {unknown} unknown"));
        if acked + unknown != *n {
            problems.push(format!(
                "{group} wrote {n} documents: {acked} acknowledged, {unknown} unknown"
            ));
        }
    }
    eprintln!("{}: {}", T::SEQUENCE.name, summary.join("; "));
    assert!(
        problems.is_empty(),
        "{}: {}\n({})",
        T::SEQUENCE.name,
        problems.join("\n"),
        summary.join("; ")
    );
    if T::UNIQUE && told.unknown.values().all(|&n| n == 0) {
        // Every document stored under the id it was given, and nothing else.
        let acked: BTreeMap<(String, i64), Held> = told
            .acked
            .iter()
            .map(|(scope, id, by, n)| ((scope.clone(), *id), named(by, *n)))
            .collect();
        assert_eq!(
            stored,
            acked,
            "{}: stored as acknowledged",
            T::SEQUENCE.name
        );
    }
    check_others::<T>(db).await;
    check_codes::<T>(db).await;
    let mut ids: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for (scope, id, _, _) in &told.acked {
        ids.entry(scope.clone()).or_default().insert(*id);
    }
    ids
}

/// For a model with several sequences: every stored document carries a number of each
/// other sequence, and no two documents the same one in a scope. Returns, per other
/// sequence, the numbers stored in each scope.
pub async fn check_others<T: Document>(
    db: &mongodb::Database,
) -> Vec<BTreeMap<String, BTreeSet<i64>>> {
    let documents = all_documents(db, T::SEQUENCE.collection).await;
    let mut all = Vec::new();
    for seq in T::OTHERS {
        let mut numbers: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
        for d in documents
            .iter()
            .filter(|d| !matches!(d.get("_id"), Some(Bson::String(_))))
        {
            let scope = match seq.scope.first() {
                Some(field) => d.get_str(field).unwrap().to_owned(),
                None => String::new(),
            };
            let number = d
                .get(seq.field)
                .and_then(integer)
                .filter(|&number| number != 0)
                .unwrap_or_else(|| panic!("{}: no {} in {d}", seq.name, seq.field));
            assert!(
                numbers.entry(scope.clone()).or_default().insert(number),
                "{}: {scope}/{number} stored twice (in {d})",
                seq.name
            );
        }
        all.push(numbers);
    }
    all
}

/// For a model with display fields: every stored document carries a code in each, the
/// code its own numbers and fields write (so, per the format, its number and scope), no
/// two documents the same code, and the derive's `find_by_<field>` finds each document
/// by it.
pub async fn check_codes<T: Model>(db: &mongodb::Database) {
    use futures_util::StreamExt;

    if T::DISPLAYS.is_empty() {
        return;
    }
    let documents: Vec<T> = all_documents(db, T::SEQUENCE.collection)
        .await
        .into_iter()
        .filter(|d| !matches!(d.get("_id"), Some(Bson::String(_))))
        .map(|d| {
            mongodb::bson::from_document(d.clone())
                .unwrap_or_else(|e| panic!("{}: {d} is not a document of the model: {e}", T::NAME))
        })
        .collect();
    for (index, display) in T::DISPLAYS.iter().enumerate() {
        let mut seen = BTreeSet::new();
        for doc in &documents {
            let code = doc.display_field(index).unwrap();
            let mut written = String::new();
            doc.write_code(index, &mut written).unwrap();
            assert!(!code.is_empty(), "{}: no code in {doc:?}", display.field);
            assert_eq!(code, &written, "{}: the code of {doc:?}", display.format);
            assert!(
                seen.insert(code.clone()),
                "{}: {code} stored twice",
                display.format
            );
        }
        let finds = futures_util::stream::iter(&documents)
            .map(|doc| async move {
                let code = doc.display_field(index).unwrap();
                (doc, T::find_by_code(db, index, code).await)
            })
            .buffer_unordered(16)
            .collect::<Vec<_>>()
            .await;
        for (doc, found) in finds {
            assert_eq!(
                found.as_ref(),
                Some(doc),
                "{}: found by its code",
                display.format
            );
        }
    }
}

/// Judges the acknowledged ids of each scope by the strategy's promise, `n` documents
/// per scope, nothing failed: counters dense (see `assert_dense` for SecantusDB's counter
/// retries), optimistic and gapless `1..=n`, blocks distinct and at most `holders` blocks
/// of 10 past `n`.
pub fn assert_strategy<T: Document>(
    ids: &BTreeMap<String, BTreeSet<i64>>,
    told: &Told,
    holders: usize,
) {
    let n = told.acked.len() / ids.len().max(1);
    for (scope, ids) in ids {
        assert_eq!(ids.len(), n, "{scope:?}: documents spread evenly");
        match T::SEQUENCE.strategy {
            Strategy::Counters => assert_dense(ids, n, told.retries),
            Strategy::Block { .. } => {
                let top = *ids.last().unwrap();
                let bound = (n + holders * 10) as i64 + 10 * told.retries as i64;
                assert!(top <= bound, "{scope:?}: ids up to {top} for {n} documents");
                assert!(*ids.first().unwrap() >= 1, "{scope:?}: ids from 1");
            }
            _ => assert_eq!(ids, &one_to(n), "{scope:?}: no gap, no repeat"),
        }
    }
}

/// What a call made of one of its documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// The server acknowledged this call's write of it.
    Acked,
    /// It carries its id and may be stored: only a resume may touch it.
    Unknown,
    /// Its id is unset: it is not stored, and never will be under the id it had.
    Refused,
}

/// The fate of each of `docs` after their call (`None`: dropped by the caller's
/// timeout): acknowledged when the call returned `Ok` or a bulk error lists it as
/// inserted, else told by its id field.
pub fn fates<T: Document>(docs: &[T], result: Option<&Result<(), Error>>) -> Vec<Fate> {
    let id = |i: usize| number_of(&docs[i]);
    let inserted: &[usize] = match result {
        Some(Ok(())) => return vec![Fate::Acked; docs.len()],
        Some(Err(error)) => match error.kind() {
            ErrorKind::Bulk(bulk) => {
                assert!(
                    bulk.failed.iter().all(|f| id(f.index) == 0),
                    "a failed document is unset: {error}"
                );
                assert!(
                    bulk.unknown.iter().all(|&i| id(i) != 0),
                    "an unknown document keeps its id: {error}"
                );
                &bulk.inserted
            }
            ErrorKind::OutcomeUnknown { id: unknown, .. } => {
                assert!(
                    (0..docs.len()).all(|i| id(i) != 0),
                    "{error}: the id is kept"
                );
                if let [_] = docs {
                    assert_eq!(id(0), *unknown, "{error}: an unknown outcome keeps the id");
                }
                &[]
            }
            _ => &[],
        },
        None => &[],
    };
    (0..docs.len())
        .map(|i| match (inserted.contains(&i), id(i)) {
            (true, _) => Fate::Acked,
            (false, 0) => Fate::Refused,
            (false, _) => Fate::Unknown,
        })
        .collect()
}

/// How a writer's tasks drive their documents to an end.
#[derive(Clone, Copy)]
pub struct Drive {
    pub op: Op,
    /// Documents per `insert_many` call.
    pub batch: u32,
    /// The time given to a document's first call, and to each later one: a call that
    /// takes longer is dropped (cancelled).
    pub first: Duration,
    pub then: Duration,
    /// Resumes of a document of unknown outcome before it is left unknown. With equal
    /// documents, a resume that meets a copy already stored cannot tell its own earlier
    /// copy from another writer's equal one, so it stays unknown; unique documents are
    /// resumed with `content_is_unique` (their content is their own) until settled.
    pub resumes: u32,
}

impl Drive {
    /// Calls of 30 s, three resumes, half the tasks inserting one document per call and
    /// half in batches of [`BATCH`](super::writers::BATCH).
    pub const PATIENT: Drive = Drive {
        op: Op::Both,
        batch: super::writers::BATCH,
        first: Duration::from_secs(30),
        then: Duration::from_secs(30),
        resumes: 3,
    };

    pub fn with(self, op: Op) -> Drive {
        Drive { op, ..self }
    }
}

/// What a writer's tasks saw.
#[derive(Default, Debug)]
pub struct Driven {
    pub lines: Vec<Line>,
    /// Per writer, the documents left unknown.
    pub unknown: BTreeMap<String, usize>,
    pub errors: BTreeMap<&'static str, usize>,
    /// The first error of each variant, as it was displayed.
    pub first_errors: BTreeMap<&'static str, String>,
    pub cancelled: usize,
}

impl Driven {
    pub fn merge(&mut self, other: Driven) {
        self.lines.extend(other.lines);
        for (writer, n) in other.unknown {
            *self.unknown.entry(writer).or_default() += n;
        }
        for (variant, n) in other.errors {
            *self.errors.entry(variant).or_default() += n;
        }
        for (variant, message) in other.first_errors {
            self.first_errors.entry(variant).or_insert(message);
        }
        self.cancelled += other.cancelled;
    }

    pub fn errors(&self) -> usize {
        self.errors.values().sum()
    }

    /// Documents left unknown.
    pub fn unknown(&self) -> usize {
        self.unknown.values().sum()
    }

    /// Adds what the writers were told, for [`check`].
    pub fn record<T: Document>(self, told: &mut Told) {
        told.add::<T>(self.lines);
        for (writer, n) in self.unknown {
            *told.unknown.entry(writer).or_default() += n;
        }
    }
}

/// Calls one document (or batch) may take before the writer gives up on it.
const TRIES: u32 = 200;

/// Writer `by`'s documents `ns`, driven by one task to an end, the way the README says:
/// a document that carries an id (an unknown outcome, a cancelled call) is resumed, up
/// to `drive.resumes` times, then left unknown (a unique document, resumed with
/// `content_is_unique`, until it is settled); one whose id is unset is inserted again.
/// Calls of `drive.op.batch_of(task, drive.batch)` documents; every loop is bounded.
/// Every error must be typed and name the sequence.
pub async fn drive_task<T: Model>(
    via: &Via,
    by: &str,
    task: usize,
    ns: std::ops::Range<u32>,
    drive: Drive,
) -> Driven {
    let mut driven = Driven::default();
    let resumes_allowed = if T::UNIQUE { u32::MAX } else { drive.resumes };
    // (n, document, resumes that left it unknown)
    let mut pending: Vec<(u32, T, u32)> = ns.map(|n| (n, T::make(by, n), 0)).collect();
    for attempt in 0..TRIES {
        if pending.is_empty() {
            return driven;
        }
        let timeout = if attempt == 0 {
            drive.first
        } else {
            drive.then
        };
        let (carried, fresh): (Vec<_>, Vec<_>) = std::mem::take(&mut pending)
            .into_iter()
            .partition(|(_, doc, _)| number_of(doc) != 0);
        for (resume, group) in [(false, fresh), (true, carried)] {
            for chunk in group.chunks(drive.op.batch_of(task, drive.batch) as usize) {
                let mut docs: Vec<T> = chunk.iter().map(|(_, doc, _)| doc.clone()).collect();
                let call = async {
                    match resume {
                        true => via.resume(&mut docs, T::UNIQUE).await,
                        false => via.insert(&mut docs, None).await,
                    }
                };
                let result = tokio::time::timeout(timeout, call).await.ok();
                match &result {
                    None => driven.cancelled += 1,
                    Some(Err(error)) => {
                        if std::env::var_os("SEQID_FAULTS_VERBOSE").is_some() {
                            eprintln!("{by} task {task}, resume={resume}: {error}");
                        }
                        // The sequence whose step failed: the primary, or another
                        // sequence of the document (its counter's `$inc`, say).
                        let named = error
                            .sequence()
                            .map(|s| s.name)
                            .unwrap_or_else(|| panic!("the error names no sequence: {error}"));
                        let ours = std::iter::once(&T::SEQUENCE).chain(T::OTHERS);
                        let shown = error.to_string();
                        assert!(ours.map(|s| s.name).any(|n| n == named), "{shown}");
                        assert!(shown.contains(named), "{shown}");
                        *driven.errors.entry(variant(error)).or_default() += 1;
                        driven.first_errors.entry(variant(error)).or_insert(shown);
                    }
                    Some(Ok(())) => {}
                }
                let fates = fates(&docs, result.as_ref());
                for ((n, _, resumes), (doc, fate)) in chunk.iter().zip(docs.into_iter().zip(fates))
                {
                    let resumes = resumes + u32::from(resume);
                    match fate {
                        Fate::Acked => driven.lines.push((number_of(&doc), by.to_owned(), *n)),
                        Fate::Unknown if resumes >= resumes_allowed => {
                            *driven.unknown.entry(by.to_owned()).or_default() += 1;
                        }
                        _ => pending.push((*n, doc, resumes)),
                    }
                }
            }
        }
        tokio::time::sleep(pause(attempt)).await;
    }
    panic!(
        "{by}: {} documents unfinished after {TRIES} calls",
        pending.len()
    );
}

/// `tasks` tasks of writer `by` (for unique documents, each task a writer of its own,
/// `by-task`), `per_task` documents each, driven to an end.
pub async fn drive<T: Model>(
    via: &Via,
    by: &str,
    tasks: usize,
    per_task: u32,
    drive: Drive,
) -> Driven {
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (via, by) = (via.clone(), super::writers::task_writer::<T>(by, task));
            tokio::spawn(async move { drive_task::<T>(&via, &by, task, 0..per_task, drive).await })
        })
        .collect();
    let mut driven = Driven::default();
    for handle in handles {
        driven.merge(handle.await.expect("a writer task panicked"));
    }
    driven
}
