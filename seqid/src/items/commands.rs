//! The commands of an append of items to a stored document's array, and what their
//! answers mean. Two ways, by what the server allows:
//!
//! - one `findAndModify` whose update is a pipeline of one `$set` stage (MongoDB 4.2+): the
//!   server reads the mark and the largest stored number, numbers the items after them,
//!   concatenates them to the array and moves the mark, all in one atomic update of the one
//!   document ([`pipeline`]);
//! - where the server refuses pipelines (nx-27017, some MongoDB-compatible services): a
//!   read of the mark, the array and the recent appends ([`read`]), then an update
//!   conditional on the mark as read ([`conditional`]), again when another writer moved it.
//!
//! An append goes to one document: a filter that does not name `_id` by equality
//! ([`names_one`]) is read down to the one document it finds first ([`only`]), or, on the
//! conditional way, by the read that way makes anyway (up to two documents).
//!
//! The pipeline filters on the array being an array (or missing, or null), and on the
//! append's token not being among the array's recent appends: an append whose answer was
//! lost, sent again with its token, matches nothing if the first landed. The conditional
//! update filters on the `_id` and the mark as read, and leaves a field that is no longer an
//! array to the `$push`, which refuses it ([`not_an_array`]).

use mongodb::bson::{Bson, Document as BsonDocument, doc, oid::ObjectId};
use mongodb::error::{Error as DriverError, ErrorKind, WriteFailure};
use mongodb::options::ReturnDocument;
use mongodb::{ClientSession, Collection};

use futures_util::TryStreamExt;

use crate::schema::item::{APPENDS_KEPT, ItemsField};

/// One append, as it goes to the server: the caller's filter, the items serialized with
/// their numbers unset, the append's token.
#[derive(Clone, Debug)]
pub(crate) struct Append {
    pub spec: &'static ItemsField,
    pub filter: BsonDocument,
    pub items: Vec<BsonDocument>,
    pub token: ObjectId,
}

impl Append {
    /// The caller's filter, where the array is an array (or none yet) and this append has
    /// not landed: the pipeline's guards.
    fn guarded(&self) -> BsonDocument {
        let spec = self.spec;
        let token = format!("{}.token", spec.appends());
        doc! { "$and": [
            self.filter.clone(),
            { "$or": [{ spec.field: Bson::Null }, { spec.field: { "$type": "array" } }] },
            { token: { "$nin": [self.token] } },
        ] }
    }

    /// The caller's filter and `condition`: the conditional way's guards. The condition on
    /// the mark as read is what makes it land once: the update moves the mark past that
    /// value, so that a copy sent again (the driver's retry, a request left on a closed
    /// connection) matches nothing; no token guard is needed, and none could be had on
    /// nx-27017, which takes that way: there `$ne` on a missing field matches nothing, an
    /// update whose filter holds `$nin` on a missing field, or an `$or` of a null and a
    /// `$type`, is answered matched and modified and writes nothing, and one whose filter
    /// holds `$type` is applied to another document than the one matched.
    fn conditioned(&self, condition: BsonDocument) -> BsonDocument {
        doc! { "$and": [self.filter.clone(), condition] }
    }

    fn step(&self) -> i64 {
        self.spec.number.step
    }
}

/// What nx-27017 0.8 answers an update pipeline: its Python reads the update as a
/// document. The answer has no `code`, so the driver reports it as an invalid reply
/// carrying the server's answer.
const NX_REFUSES_PIPELINES: &str = "'list' object has no attribute 'keys'";

/// Whether `error` is a server refusing an update pipeline (nx-27017: see
/// [`NX_REFUSES_PIPELINES`]). Matched narrowly: any other error is the caller's.
pub(crate) fn refuses_pipelines(error: &DriverError) -> bool {
    let says = |message: &str| message == NX_REFUSES_PIPELINES;
    match &*error.kind {
        ErrorKind::Command(command) => says(&command.message),
        ErrorKind::InvalidResponse { .. } => error
            .server_response()
            .and_then(|answer| answer.get_str("errmsg").ok())
            .is_some_and(says),
        _ => false,
    }
}

/// Whether `filter` names `_id` by equality at its top level, and so matches one document
/// at most: `{ _id: v }` (`v` neither an operator document nor a regular expression, which
/// match many) or `{ _id: { $eq: v } }`, beside other conditions or not.
pub(crate) fn names_one(filter: &BsonDocument) -> bool {
    match filter.get("_id") {
        None | Some(Bson::RegularExpression(_)) => false,
        Some(Bson::Document(value)) if value.keys().any(|key| key.starts_with('$')) => {
            value.len() == 1 && value.contains_key("$eq")
        }
        Some(_) => true,
    }
}

/// What a read of the documents a filter matches found, up to two.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Only {
    None,
    /// One document, with this `_id`.
    One(Bson),
    Several,
}

/// The one document `filter` matches, by its `_id`: read with the filter, at most two.
pub(crate) async fn only(
    coll: &Collection<BsonDocument>,
    filter: &BsonDocument,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<Only> {
    let found = first_two(coll, filter.clone(), doc! { "_id": 1 }, session).await?;
    Ok(match &found[..] {
        [] => Only::None,
        [one] => Only::One(one.get("_id").cloned().unwrap_or(Bson::Null)),
        _ => Only::Several,
    })
}

/// How many documents `filter` matches, for the error that says it matches several.
pub(crate) async fn count(
    coll: &Collection<BsonDocument>,
    filter: &BsonDocument,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<u64> {
    let action = coll.count_documents(filter.clone());
    match session {
        Some(session) => action.session(session).await,
        None => action.await,
    }
}

/// The first two documents `filter` matches, projected.
async fn first_two(
    coll: &Collection<BsonDocument>,
    filter: BsonDocument,
    projection: BsonDocument,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<Vec<BsonDocument>> {
    let action = coll.find(filter).projection(projection).limit(2);
    match session {
        Some(session) => {
            let mut cursor = action.session(&mut *session).await?;
            let mut found = Vec::new();
            while cursor.advance(session).await? {
                found.push(cursor.deserialize_current()?);
            }
            Ok(found)
        }
        None => action.await?.try_collect().await,
    }
}

/// Whether `error` is the server refusing the conditional update's `$push` onto the items'
/// field because it holds something other than an array (another writer changed it after
/// the read): MongoDB's `BadValue` (2), "The field '<field>' must be an array but is of
/// type ...". Nothing was written; the read that follows tells what the field holds.
pub(crate) fn not_an_array(error: &DriverError, spec: &ItemsField) -> bool {
    let ErrorKind::Write(WriteFailure::WriteError(write)) = &*error.kind else {
        return false;
    };
    let says = format!("The field '{}' must be an array", spec.field);
    write.code == 2 && write.message.contains(&says)
}

/// The one-round-trip append: the mark after it, or `None` if the filter (with its
/// guards) matched no document.
pub(crate) async fn pipeline(
    coll: &Collection<BsonDocument>,
    append: &Append,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<Option<i64>> {
    let spec = append.spec;
    let (field, last, no) = (spec.field, spec.last, spec.number.key);
    let appends = spec.appends();
    // The stored numbers through `$map`, not the path `"$field.no"`: SecantusDB resolves
    // such a path to null in an expression (MongoDB to the array of the numbers).
    let stored = doc! { "$map": {
        "input": { "$ifNull": [format!("${field}"), []] },
        "as": "item",
        "in": format!("$$item.{no}"),
    } };
    // "None yet" counts too: a mark stored below it (0, by a writer that knew nothing of
    // `start`) does not number below `start`.
    let base = doc! { "$max": [
        { "$ifNull": [format!("${last}"), spec.number.none_yet()] },
        spec.number.none_yet(),
        { "$max": stored },
    ] };
    let n = i64::try_from(append.items.len()).unwrap_or(i64::MAX);
    let after = |k: i64| doc! { "$add": [base.clone(), k.saturating_mul(append.step())] };
    let numbered: Vec<Bson> = append
        .items
        .iter()
        .zip(1..)
        .map(|(item, k)| {
            Bson::Document(doc! { "$mergeObjects": [
                { "$literal": item.clone() },
                { no: after(k) },
            ] })
        })
        .collect();
    let entry = doc! { "token": append.token, "last": after(n) };
    let stage = doc! { "$set": {
        last: after(n),
        field: { "$concatArrays": [{ "$ifNull": [format!("${field}"), []] }, numbered] },
        appends.as_str(): { "$slice": [
            { "$concatArrays": [{ "$ifNull": [format!("${appends}"), []] }, [entry]] },
            -APPENDS_KEPT,
        ] },
    } };
    let action = coll
        .find_one_and_update(append.guarded(), vec![stage])
        .return_document(ReturnDocument::After)
        .projection(doc! { last: 1 });
    let found = match session {
        Some(session) => action.session(session).await?,
        None => action.await?,
    };
    Ok(found.map(|stored| integer(stored.get(last)).unwrap_or(spec.number.none_yet())))
}

/// The stored document as an append sees it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Seen {
    /// No document matches the filter.
    Missing,
    /// More than one document matches the filter.
    Several,
    /// The array's field holds this, not an array (nor null).
    NotArray(Bson),
    /// This append's token is among the recent appends: it landed, setting this mark.
    Landed(i64),
    /// The document, with the mark as an integer (`None`: missing, null, or not an integer)
    /// and as stored (the conditional update's condition), the largest stored number, the
    /// array's presence, and its `_id`.
    Open {
        id: Bson,
        mark: Option<i64>,
        stored_mark: Bson,
        largest: Option<i64>,
        has_array: bool,
    },
}

/// Reads the document `append` goes to: its mark, its array and its recent appends; up to
/// two documents, so that a filter matching several is told.
pub(crate) async fn read(
    coll: &Collection<BsonDocument>,
    append: &Append,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<Seen> {
    let spec = append.spec;
    let appends = spec.appends();
    let projection = doc! { spec.last: 1, spec.field: 1, appends.as_str(): 1 };
    let found = first_two(coll, append.filter.clone(), projection, session).await?;
    Ok(seen(append, found))
}

/// What the documents read mean for `append` (see [`Seen`]).
pub(crate) fn seen(append: &Append, mut found: Vec<BsonDocument>) -> Seen {
    let spec = append.spec;
    if found.len() > 1 {
        return Seen::Several;
    }
    let Some(stored) = found.pop() else {
        return Seen::Missing;
    };
    if let Ok(recent) = stored.get_array(spec.appends()) {
        let mine = recent
            .iter()
            .filter_map(Bson::as_document)
            .find(|entry| entry.get("token") == Some(&Bson::ObjectId(append.token)));
        if let Some(mark) = mine.and_then(|entry| integer(entry.get("last"))) {
            return Seen::Landed(mark);
        }
    }
    let largest = match stored.get(spec.field) {
        None | Some(Bson::Null) => None,
        Some(Bson::Array(items)) => items
            .iter()
            .filter_map(|item| integer(item.as_document()?.get(spec.number.key)))
            .max(),
        Some(other) => return Seen::NotArray(other.clone()),
    };
    Seen::Open {
        id: stored.get("_id").cloned().unwrap_or(Bson::Null),
        mark: integer(stored.get(spec.last)),
        stored_mark: stored.get(spec.last).cloned().unwrap_or(Bson::Null),
        largest,
        has_array: matches!(stored.get(spec.field), Some(Bson::Array(_))),
    }
}

/// The conditional append, after a read that saw the document `Open`: the items numbered
/// from `base` (already in `numbered`), the mark moved to `mark`, where the mark is still
/// as read. Whether it landed (`false`: another writer moved the mark, or the array, first).
pub(crate) async fn conditional(
    coll: &Collection<BsonDocument>,
    append: &Append,
    read: &Seen,
    numbered: Vec<BsonDocument>,
    mark: i64,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<bool> {
    let spec = append.spec;
    let Seen::Open {
        id,
        stored_mark,
        has_array,
        ..
    } = read
    else {
        return Ok(false);
    };
    // The mark as it was read, whatever it holds: a mark that is not an integer is
    // replaced by one (the pipeline refuses it: `$add` takes numbers). An array read is
    // not checked again: the `$push` refuses a field that is no longer one. A field read
    // missing or null is set whole, and only where it still is.
    let was_mark = stored_mark.clone();
    let mut condition = doc! { "_id": id.clone(), spec.last: was_mark };
    if !has_array {
        condition.insert(spec.field, Bson::Null);
    }
    let numbered: Vec<Bson> = numbered.into_iter().map(Bson::Document).collect();
    let entry = doc! { "token": append.token, "last": mark };
    let appends = spec.appends();
    let recent = doc! { "$each": [entry], "$slice": -APPENDS_KEPT };
    let update = match has_array {
        true => doc! {
            "$set": { spec.last: mark },
            "$push": { spec.field: { "$each": numbered }, appends.as_str(): recent },
        },
        // `$push` refuses a null field: the array is set whole where there was none.
        false => doc! {
            "$set": { spec.last: mark, spec.field: numbered },
            "$push": { appends.as_str(): recent },
        },
    };
    let action = coll.update_one(append.conditioned(condition), update);
    let result = match session {
        Some(session) => action.session(session).await?,
        None => action.await?,
    };
    Ok(result.matched_count == 1)
}

/// An integer as stored (Int32, Int64, or a Double holding one).
fn integer(value: Option<&Bson>) -> Option<i64> {
    match value? {
        Bson::Int32(n) => Some(i64::from(*n)),
        Bson::Int64(n) => Some(*n),
        Bson::Double(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Some(*x as i64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::item::testing::LINES;

    fn append() -> Append {
        Append {
            spec: &LINES,
            filter: doc! { "_id": 1 },
            items: vec![doc! { "sku": "$a" }],
            token: ObjectId::new(),
        }
    }

    #[test]
    fn what_a_read_means() {
        let a = append();
        assert_eq!(seen(&a, vec![]), Seen::Missing);
        assert_eq!(
            seen(&a, vec![doc! { "_id": 1, "lines": "x" }]),
            Seen::NotArray(Bson::String("x".into()))
        );
        let two = vec![
            doc! { "_id": 1, "lines": [] },
            doc! { "_id": 2, "lines": [] },
        ];
        assert_eq!(seen(&a, two), Seen::Several);
        let landed = doc! { "_id": 1, "lines": [], "_seqid_lines_appends": [{ "token": a.token, "last": 4_i32 }] };
        assert_eq!(seen(&a, vec![landed]), Seen::Landed(4));
        let open = doc! { "_id": 1, "lines": [{ "no": 7 }, { "no": 3_i64 }], "lines_last": 5 };
        assert_eq!(
            seen(&a, vec![open]),
            Seen::Open {
                id: Bson::Int32(1),
                mark: Some(5),
                stored_mark: Bson::Int32(5),
                largest: Some(7),
                has_array: true
            }
        );
    }

    /// Only a filter naming `_id` by equality at its top level goes without a read first.
    #[test]
    fn a_filter_names_one_document_by_its_id_only() {
        let oid = ObjectId::new();
        for one in [
            doc! { "_id": 7 },
            doc! { "_id": oid },
            doc! { "_id": "a", "customer": 1 },
            doc! { "_id": { "$eq": 7 } },
            doc! { "_id": { "$eq": 7 }, "customer": { "$gt": 1 } },
            doc! { "_id": { "tenant": 1, "n": 2 } },
        ] {
            assert!(names_one(&one), "{one}");
        }
        for several in [
            doc! {},
            doc! { "customer": 1 },
            doc! { "_id": { "$in": [1, 2] } },
            doc! { "_id": { "$eq": 7, "$ne": 8 } },
            doc! { "_id": { "$gte": 1 } },
            doc! { "_id": mongodb::bson::Regex { pattern: "^a".into(), options: String::new() } },
            doc! { "$and": [{ "_id": 7 }] },
            doc! { "$or": [{ "_id": 7 }, { "_id": 8 }] },
        ] {
            assert!(!names_one(&several), "{several}");
        }
    }
}
