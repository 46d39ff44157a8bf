//! `number_draft` and `number_drafts`: a stored document of a sequence numbered later
//! (`numbered = "later"`) gets its number when it is issued.
//!
//! One document: the draft is read (by the caller's filter, on the primary, in the
//! caller's session; a filter that finds more than one document is refused, since it
//! would answer for a document the caller may not mean), an id is taken only if it has no
//! number yet and no code stored (one per sequence, when the type has several: every one
//! of them is numbered later, and they are set together) (a code is written with the number, never over the
//! caller's), and one conditional update ([`write::number_draft`]) sets the number and the
//! codes that show it (with the caller's own fields, the state that makes the document
//! "issued") where the number is still unset: `{ _id, field: null }`. Two callers numbering one draft at once both take an id, and the condition lets
//! exactly one update through; the other matches nothing, reads the draft again, and
//! answers with the number it got. Its own id is a race lost: given back to the handle's
//! live block with `block`, a gap with `counters` (counted in
//! [`Stats::races_lost`](crate::Stats::races_lost)); with `gapless`, everything runs in the
//! caller's transaction, and the race is a write conflict that aborts it, its id with it.
//!
//! An update whose answer was lost is settled by reading the draft: the number this call
//! took is there (the counter hands a number out once, and the condition kept any other
//! update from landing after it), another is (this call's update can no longer match:
//! the draft is numbered), or none is yet: [`ErrorKind::OutcomeUnknown`], and calling again
//! reads the draft first; an update still on its way then matches nothing.
//!
//! Many documents: every draft matching a filter and still unnumbered, in the caller's
//! order, with one reservation per scope, each then set with its own conditional update
//! (all at once; one after the other in a transaction, whose session serves one command at
//! a time). A draft numbered meanwhile by another caller keeps its number and is left out.

use std::time::Duration;

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use serde::de::DeserializeOwned;

use crate::base::error::{Error, ErrorKind};
use crate::call::context::Context;
use crate::fields::code;
use crate::fields::ids::{ensure_draft_unset, fill};
use crate::fields::scope::{Scope, grouped};
use crate::round_trip::stored::{self, Stored, Within};
use crate::round_trip::write;
use crate::schema::id::IdField;
use crate::schema::model::Model;
use crate::schema::sequence::{Sequence, Strategy};
use crate::source::others::{self, Wanted};
use crate::source::{self, counted};
use crate::state::turns;

/// What the caller asks for beyond the filter: its own fields set in the same update, and
/// the order of a bulk numbering.
#[derive(Clone, Debug, Default)]
pub(crate) struct Issue {
    /// Fields the update sets besides the number and its codes.
    pub set: BsonDocument,
    /// The order in which a bulk numbering hands out its numbers (`_id` ascending by
    /// default).
    pub order: Option<BsonDocument>,
}

/// What [`number_draft`](crate::Document::number_draft) did: the document as stored, with
/// its number and its codes, and whether this call gave the number (else another caller
/// had, before or at the same time).
///
/// ```
/// let numbered = seqid::Numbered { doc: "INV-2026-0042", by_this_call: true };
/// assert!(numbered.by_this_call);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Numbered<T> {
    /// The document as stored, numbered.
    pub doc: T,
    /// Whether this call gave it its number.
    pub by_this_call: bool,
}

impl<T> Numbered<T> {
    /// `doc`, numbered by this call or not.
    fn by(doc: T, by_this_call: bool) -> Self {
        Numbered { doc, by_this_call }
    }
}

/// No draft matches `filter`.
fn not_found(seq: &'static Sequence, filter: &BsonDocument) -> Error {
    let filter = filter.to_string().into();
    Error::new(seq, ErrorKind::DraftNotFound { filter })
}

/// How long a call waits for the call of this process ahead of it on the same draft
/// before it goes on without its turn (the update's condition still numbers it once).
const DRAFT_PATIENCE: Duration = Duration::from_secs(2);

/// `number_draft`: the document matching `filter`, numbered if it was not.
pub(crate) async fn number_draft<T: Model + DeserializeOwned>(
    filter: BsonDocument,
    issue: &Issue,
    cx: &mut Context<'_>,
) -> Result<Numbered<T>, Error> {
    let seq = cx.seq;
    check_call::<T>(issue, cx)?;
    // The calls of this process for this draft take turns (see `state::turns`): the second
    // reads it numbered, and takes no id.
    let _turn = turns::key_turn(cx.route.db.name(), seq, &filter, DRAFT_PATIENCE).await;
    place_before_reading::<T>(&filter, cx).await;
    let Stored { stored, mut doc } = read_only::<T>(&filter, cx).await?;
    if !doc.sequence_id().is_unset() {
        return Ok(Numbered::by(doc, false));
    }
    let scope = Scope::of(seq, &doc)?;
    // Before the id is taken.
    ensure_draft_unset(&doc)?;
    let id = match T::OTHERS.is_empty() {
        true => counted::take_one(&scope, cx).await?,
        // Every sequence of the type is numbered later: each takes its number now, and the
        // one update sets them all.
        false => Box::pin(others::take_with_primary(&mut doc, &scope, cx)).await?,
    };
    let update = numbered(&mut doc, id, &issue.set)?;
    let at = draft_at(seq, &stored);
    let written = write::number_draft(&at, update, cx).await;
    settle(doc, written, &at, id, &scope, cx).await
}

/// Gapless, in the caller's transaction: the turn at the counter of the draft's scope,
/// before the draft is read in the transaction (see [`counted::place_before_reading`]).
/// The scope of a scoped sequence is learned by reading the draft outside the transaction
/// first (one round trip more); nothing is taken for a draft numbered already, or one not
/// found outside (stored in this very transaction, say: the read inside tells).
async fn place_before_reading<T: Model + DeserializeOwned>(
    filter: &BsonDocument,
    cx: &mut Context<'_>,
) {
    let seq = cx.seq;
    if seq.strategy != Strategy::Gapless || !cx.session.in_transaction() {
        return;
    }
    let scope = match seq.scope.is_empty() {
        true => Some(Scope::NONE),
        // An error here is the read inside's to report.
        false => match stored::one::<T>(filter, "reading the draft", cx, Within::Nothing).await {
            Ok(Some(found)) if found.doc.sequence_id().is_unset() => {
                Scope::of(seq, &found.doc).ok()
            }
            _ => None,
        },
    };
    if let Some(scope) = scope {
        counted::place_before_reading(&scope, cx).await;
    }
}

/// What the update of the draft at `at` with `id` left, as `written` says (`Ok(true)`: `doc`
/// numbered by this call); one that matched nothing, or failed, leaves the number the
/// draft holds, whoever gave it, or the error. Nothing is read inside the caller's
/// transaction, which the failure aborted.
async fn settle<T: Model + DeserializeOwned>(
    doc: T,
    written: Result<bool, Error>,
    at: &BsonDocument,
    id: i64,
    scope: &Scope,
    cx: &mut Context<'_>,
) -> Result<Numbered<T>, Error> {
    let seq = cx.seq;
    if let Ok(true) = written {
        return Ok(Numbered::by(doc, true));
    }
    // `Ok(false)`, no error: no draft at its `_id` unnumbered: another caller numbered it,
    // or it is gone.
    let error = written.err();
    if cx.session.in_transaction() {
        return Err(error.unwrap_or_else(|| not_found(seq, at)));
    }
    let unknown = |error: Option<Error>| match error.map(Error::into_driver) {
        Some(Ok(source)) => Error::new(
            seq,
            ErrorKind::OutcomeUnknown {
                id,
                reason: "the update that numbers the draft was sent and no answer came; it sets \
                     the number only where none is, so calling again cannot number it twice",
                source,
            },
        ),
        Some(Err(error)) => error,
        None => not_found(seq, at),
    };
    let by_id = doc! { "_id": at.get("_id").cloned() };
    let Ok(read) = stored::one::<T>(&by_id, "reading the draft", cx, Within::Session).await else {
        return Err(unknown(error));
    };
    let Some(Stored { doc, .. }) = read else {
        return Err(not_found(seq, at));
    };
    match doc.sequence_id().get().map(Into::into) {
        // The number this call took, handed out to it alone, set where none was.
        Some(number) if number == i128::from(id) => Ok(Numbered::by(doc, true)),
        Some(_) => {
            // Another caller numbered it: this call's update can no longer match. Its id
            // goes back where it can only if the update is known to have done nothing.
            source::race_lost(cx, scope, id, error.is_none());
            Ok(Numbered::by(doc, false))
        }
        None => Err(unknown(error)),
    }
}

/// `number_drafts`: every draft matching `filter` and unnumbered, numbered in order.
pub(crate) async fn number_drafts<T: Model + DeserializeOwned>(
    filter: BsonDocument,
    issue: &Issue,
    cx: &mut Context<'_>,
) -> Result<Vec<T>, Error> {
    let seq = cx.seq;
    check_call::<T>(issue, cx)?;
    // The caller's filter and "no number yet": one document when the filter does not
    // name the field (the common case, and the simplest query), else both under `$and`.
    let unnumbered = match filter.contains_key(seq.field) {
        false => {
            let mut unnumbered = filter;
            unnumbered.insert(seq.field, Bson::Null);
            unnumbered
        }
        true => doc! { "$and": [filter, { seq.field: Bson::Null }] },
    };
    let order = issue.order.clone().unwrap_or_else(|| doc! { "_id": 1 });
    // Gapless and unscoped: one counter, whose turn comes before the drafts are read in
    // the caller's transaction (a scoped sequence's drafts may need several counters,
    // whose turns are taken when their ids are, as for `insert_many`).
    if seq.scope.is_empty() {
        counted::place_before_reading(&Scope::NONE, cx).await;
    }
    let drafts = stored::all::<T>(unnumbered, Some(order), None, "reading the drafts", cx).await?;
    // Scopes and codes checked before any id is taken.
    let mut scopes = Vec::with_capacity(drafts.len());
    for Stored { doc, .. } in &drafts {
        scopes.push(Scope::of(seq, doc)?);
        ensure_draft_unset(doc)?;
    }
    // One reservation per scope, all at once (in the caller's transaction, one after the
    // other), for the drafts of that scope in their order.
    let groups = grouped(scopes.iter().cloned().zip(0..drafts.len()));
    let mut ids = vec![0; drafts.len()];
    let taken = counted::take_groups(&groups, cx).await?;
    for (taken, (_, members)) in taken.into_iter().zip(&groups) {
        for (id, &at) in taken?.take().into_iter().zip(members) {
            ids[at] = id;
        }
    }
    let (stored, mut docs): (Vec<_>, Vec<_>) = drafts
        .into_iter()
        .map(|Stored { stored, doc }| (stored, doc))
        .unzip();
    // Every sequence of the type is numbered later: the others' numbers, one reservation
    // per sequence and scope, filled in before the updates are made.
    if !T::OTHERS.is_empty() {
        let positions: Vec<usize> = (0..docs.len()).collect();
        let wanted = Wanted::of(&docs, &positions)?;
        let reserved = others::reserve_outside(cx.route, &wanted).await;
        others::finish(&mut docs, &wanted, reserved, cx).await?;
    }
    let mut writes = Vec::with_capacity(docs.len());
    for ((stored, doc), &id) in stored.iter().zip(&mut docs).zip(&ids) {
        let update = numbered(doc, id, &issue.set)?;
        writes.push((draft_at(seq, stored), update));
    }
    let written = write::number_drafts(&writes, cx).await;
    let mut numbered = Vec::with_capacity(docs.len());
    let mut first_error = None;
    let numbers = ids.iter().zip(&scopes);
    let outcomes = docs.into_iter().zip(written).zip(&writes).zip(numbers);
    for (((doc, written), (at, _)), (&id, scope)) in outcomes {
        match settle(doc, written, at, id, scope, cx).await {
            Ok(given) if given.by_this_call => numbered.push(given.doc),
            // Numbered by another caller meanwhile, or gone: not this call's.
            Ok(_) => {}
            Err(error) if matches!(error.kind(), ErrorKind::DraftNotFound { .. }) => {}
            Err(error) => {
                first_error.get_or_insert(error);
            }
        }
    }
    first_error.map_or(Ok(numbered), Err)
}

/// What a call refuses before it reads anything: fields of the caller's that set what the
/// numbering sets ([`check_set`]), a gapless sequence outside a transaction.
fn check_call<T: Model>(issue: &Issue, cx: &mut Context<'_>) -> Result<(), Error> {
    check_set::<T>(&issue.set)?;
    source::require_transaction::<T>(cx)
}

/// The caller's own fields may not set what the numbering sets: the number, its codes,
/// `_id`; nor what it numbers from: a scope field.
fn check_set<T: Model>(set: &BsonDocument) -> Result<(), Error> {
    let seq = &T::SEQUENCE;
    // First: a dotted key below a scope field is refused for that, its true cause.
    if let Some(value) = writes_a_scope::<T>(set) {
        return Err(Error::new(
            seq,
            ErrorKind::InvalidOption {
                option: "set",
                value: value.into(),
                reason: "the number comes from the counter of the scope the draft has when it \
                     is issued, and would be stored under another scope, whose counter \
                     never handed it out and whose numbering would meet it: change the \
                     scope with the driver before issuing (a draft has no number to keep), \
                     or issue the draft in its own scope. Nothing was reserved or written"
                    .into(),
            },
        ));
    }
    let nested = |key: &&String| key.contains('.') || key.starts_with('$');
    if let Some(key) = set.keys().find(nested) {
        return Err(Error::new(
            seq,
            ErrorKind::InvalidOption {
                option: "set",
                value: format!("{key:?}").into(),
                reason: "fields are set whole, by their top-level names (the value may be a \
                     document)"
                    .into(),
            },
        ));
    }
    if numbered_fields::<T>()
        .chain(["_id"])
        .any(|field| set.contains_key(field))
    {
        return Err(Error::new(
            seq,
            ErrorKind::InvalidOption {
                option: "set",
                value: set.to_string().into(),
                reason: "the numbering sets the number, its codes and nothing of `_id`: set the \
                     document's other fields"
                    .into(),
            },
        ));
    }
    Ok(())
}

/// The first key of `set` that writes into a scope field of a sequence of the type (every
/// one of them is numbered later), told as the value [`check_set`] refuses: the field
/// itself, a path below it (`year.x`), or a document holding it (`a` for `a.b`).
fn writes_a_scope<T: Model>(set: &BsonDocument) -> Option<String> {
    let below = |path: &str, field: &str| {
        path.strip_prefix(field)
            .is_some_and(|rest| rest.starts_with('.'))
    };
    let fields = std::iter::once(&T::SEQUENCE).chain(T::OTHERS);
    let fields = fields.flat_map(|seq| seq.scope.iter().copied());
    let mut written = fields.flat_map(|field| set.keys().map(move |key| (key, field)));
    let (key, field) =
        written.find(|&(key, field)| key == field || below(key, field) || below(field, key))?;
    let how = if key == field {
        "the scope field"
    } else if below(key, field) {
        "below the scope field"
    } else {
        "holding the scope field"
    };
    Some(format!(
        "{{ {key:?}: {} }} ({how} `{field}`)",
        set.get(key)?
    ))
}

/// The fields the numbering sets: the numbers (every sequence of the type is numbered
/// later) and their codes.
fn numbered_fields<T: Model>() -> impl Iterator<Item = &'static str> {
    let numbers = std::iter::once(&T::SEQUENCE).chain(T::OTHERS);
    let numbers = numbers.map(|seq| seq.field);
    numbers.chain(T::DISPLAYS.iter().map(|d| d.field))
}

/// Fills `doc` with `id`, its codes and the caller's fields (as the update will store
/// them), and returns the update that sets them where the draft has no number:
/// `{ $set: { field, codes..., caller's fields... } }`.
fn numbered<T: Model + DeserializeOwned>(
    doc: &mut T,
    id: i64,
    set: &BsonDocument,
) -> Result<BsonDocument, Error> {
    let seq = &T::SEQUENCE;
    fill(doc, id)?;
    code::fill(doc)?;
    let invalid = |error: String| {
        Error::new(
            seq,
            ErrorKind::InvalidOption {
                option: "set",
                value: error.into(),
                reason: "the numbered document, with the fields set, must read back as the type"
                    .into(),
            },
        )
    };
    let mut serialized = mongodb::bson::to_document(&*doc).map_err(|e| invalid(e.to_string()))?;
    let mut fields: BsonDocument = numbered_fields::<T>()
        .filter_map(|field| Some((field.to_owned(), serialized.get(field)?.clone())))
        .collect();
    fields.extend(set.clone());
    if !set.is_empty() {
        serialized.extend(set.clone());
        *doc = mongodb::bson::from_document(serialized).map_err(|e| invalid(e.to_string()))?;
    }
    Ok(doc! { "$set": fields })
}

/// The draft as stored, by its `_id`, and only while its number is unset.
fn draft_at(seq: &Sequence, stored: &BsonDocument) -> BsonDocument {
    doc! { "_id": stored.get("_id").cloned().unwrap_or(Bson::Null), seq.field: Bson::Null }
}

/// The one document `filter` finds, as stored and as `T`: [`ErrorKind::DraftNotFound`] if
/// none, [`ErrorKind::DraftAmbiguous`] if more than one (a filter that also finds an invoice
/// issued before would answer for a document the caller did not mean).
async fn read_only<T: Model + DeserializeOwned>(
    filter: &BsonDocument,
    cx: &mut Context<'_>,
) -> Result<Stored<T>, Error> {
    let seq = cx.seq;
    let mut found =
        stored::all::<T>(filter.clone(), None, Some(2), "reading the draft", cx).await?;
    match found.len() {
        0 => Err(not_found(seq, filter)),
        1 => Ok(found.remove(0)),
        _ => Err(Error::new(
            seq,
            ErrorKind::DraftAmbiguous {
                filter: filter.to_string().into(),
                matched: stored::count(filter, "counting the drafts", cx).await.ok(),
            },
        )),
    }
}
