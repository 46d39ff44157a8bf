//! `seqid::Error`: every way taking an id or inserting can fail.

use std::fmt;

use mongodb::bson::Bson;

/// Everything that can go wrong while taking an id or inserting a document.
///
/// Each message names the sequence and the offending value, so a log line alone tells
/// what to fix.
///
/// ```
/// let error = seqid::Error::Overflow {
///     sequence: "userid".into(),
///     value: 2_147_483_648,
///     target: "the id field's type i32",
///     origin: "taken from the counter { _id: \"userid\" } in `counters`".into(),
/// };
/// assert_eq!(
///     error.to_string(),
///     "sequence `userid`: id 2147483648 does not fit the id field's type i32 \
///      (taken from the counter { _id: \"userid\" } in `counters`); nothing was inserted",
/// );
/// assert_eq!(error.sequence(), "userid");
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The driver or the server failed (network, authentication, write concern, ...).
    #[error("sequence `{sequence}`: {action} failed: {source}")]
    Driver {
        /// The sequence being served.
        sequence: String,
        /// What seqid was doing, e.g. "reserving ids in `counters`".
        action: String,
        /// The driver's error.
        #[source]
        source: Box<mongodb::error::Error>,
    },

    /// The counter document holds a `seq` seqid cannot count from: not a number, a number
    /// with a fraction, a Double from 2^53 on (where a Double can no longer hold every
    /// integer) or one the ids asked for would take there, or a Decimal128 they would take
    /// beyond the range of an `i64`. The counter is left as it was, and `value` is what it
    /// holds: the update applies only to a counter it leaves countable.
    #[error(
        "sequence `{sequence}`: the counter {{ _id: {counter} }} in `{counters}` holds seq: {}, {}; \
         it was left as it is",
        crate::numeric::shown(value),
        not_countable(value)
    )]
    CounterNotNumeric {
        /// The sequence.
        sequence: String,
        /// The counter document's `_id`, as shown: `"userid"`, or for a scope
        /// `{ sequence: "ticket", scope: { project: "apollo" } }`.
        counter: String,
        /// The counters collection.
        counters: String,
        /// The value the counter holds in `seq`.
        value: Box<Bson>,
    },

    /// The counter kept changing between seqid reading it and updating it as read: other
    /// writers took ids from it every time. Only a counter the guarded update leaves to
    /// seqid's own check is updated so: an Int64 beyond ±2^53, or a counter document
    /// without `seq`. No id was taken.
    #[error(
        "sequence `{sequence}`: the counter {{ _id: {counter} }} in `{counters}` changed between \
         reading it and updating it as read, {attempts} times in a row (other writers kept \
         taking ids from it); no id was taken"
    )]
    CounterContended {
        /// The sequence.
        sequence: String,
        /// The counter document's `_id`, as shown.
        counter: String,
        /// The counters collection.
        counters: String,
        /// How many updates conditional on the value read were sent.
        attempts: u32,
    },

    /// `set_counter` (or `reset_counter`) was asked to move the counter below the largest
    /// numeric `_id` already stored: the ids between are taken. Nothing was changed; call
    /// [`below_stored`](crate::SetCounter::below_stored) to do it all the same.
    #[error(
        "sequence `{sequence}`: the counter would be set to {value}, below the largest {field} \
         stored in `{collection}`{}, {largest}: the ids between are taken, and inserts would \
         fail until the counter passed them; nothing was changed (`.below_stored()` sets it \
         all the same)",
        if scope.is_empty() { String::new() } else { format!(" in scope {scope}") }
    )]
    CounterBelowStored {
        /// The sequence.
        sequence: String,
        /// The collection.
        collection: String,
        /// The field the sequence fills.
        field: &'static str,
        /// The scope, as shown (`{ "project": "apollo" }`); empty when unscoped.
        scope: String,
        /// The value asked for: the last id handed out.
        value: i64,
        /// The largest numeric `_id` stored.
        largest: i64,
    },

    /// A `gapless` sequence was asked for an id outside a transaction: its ids come from a
    /// counter updated inside the caller's transaction, so that an aborted transaction
    /// takes its id back. Nothing was written.
    #[error(
        "sequence `{sequence}` is gapless: its inserts must run in a transaction, and {}; \
         start one (e.g. `session.start_transaction().and_run(...)`) and pass the session \
         with `.session(&mut session)`. Nothing was written",
        if *has_session { "the session given has none running" } else { "no session was given" }
    )]
    TransactionRequired {
        /// The sequence.
        sequence: String,
        /// Whether a session (with no transaction running) was given.
        has_session: bool,
    },

    /// The server answered the counter's upsert (`findAndModify` with `upsert: true`) with
    /// no document, every time it was asked. MongoDB never answers an upsert so; some
    /// compatible servers do, now and then, during the concurrent first use of a counter.
    /// No id was taken from this answer.
    #[error(
        "sequence `{sequence}`: the server answered the upsert on the counter {{ _id: {counter} }} \
         in `{counters}` with no document (null), {attempts} times in a row; a MongoDB server \
         returns the counter or an error"
    )]
    NoCounter {
        /// The sequence.
        sequence: String,
        /// The counter document's `_id`, as shown.
        counter: String,
        /// The counters collection.
        counters: String,
        /// How many times the upsert was sent.
        attempts: u32,
    },

    /// The insert was sent, but its outcome could not be learned: the connection or the
    /// server went away before the answer came, a write concern was not satisfied, the
    /// server refused a duplicate id that no document held when seqid looked (a copy of
    /// this insert may still have been being applied), or a copy sent again met a
    /// document at its id that may be its own earlier copy or another writer's (equal
    /// content does not tell them apart). `reason` says which. The document may be
    /// stored, or may still be. It keeps its id, so inserting it again with
    /// [`insert`](crate::Document::insert) is refused rather than storing it twice;
    /// [`resume_insert`](crate::Document::resume_insert) finishes the job safely.
    #[error(
        "sequence `{sequence}`: the outcome of inserting {field} {id} into `{collection}` is unknown: \
         {reason} ({source}); the document keeps {field} {id}: call resume_insert to finish without \
         storing it twice"
    )]
    OutcomeUnknown {
        /// The sequence.
        sequence: String,
        /// The target collection.
        collection: String,
        /// The field the sequence fills (`_id`, or the field marked `#[seq_id]`).
        field: &'static str,
        /// The id the document was given, and keeps.
        id: i64,
        /// Why the outcome cannot be known.
        reason: &'static str,
        /// The driver's error.
        #[source]
        source: Box<mongodb::error::Error>,
    },

    /// An id does not fit the Rust type of the id field (or the `i64` range of a sequence).
    #[error(
        "sequence `{sequence}`: id {value} does not fit {target} ({origin}); nothing was inserted"
    )]
    Overflow {
        /// The sequence.
        sequence: String,
        /// The id that did not fit.
        value: i128,
        /// What it must fit: the id field's Rust type, or `i64`.
        target: &'static str,
        /// Where the number came from, e.g. the counter or the largest `_id` found.
        origin: String,
    },

    /// The sequence handed out 0, which a plain integer id field reads as unset (an
    /// `Option` field holds it as `Some(0)`). Nothing was inserted.
    #[error(
        "sequence `{sequence}`: the sequence handed out id 0 ({origin}), but a plain {target} id \
         field reads 0 as unset; nothing was inserted (move the sequence above 0, or make the \
         field an Option<{target}>)"
    )]
    ZeroId {
        /// The sequence.
        sequence: String,
        /// The Rust type of the id field.
        target: &'static str,
        /// Where the 0 came from.
        origin: String,
    },

    /// The insert broke a unique index. Never retried for the counters and block strategies;
    /// the optimistic strategy retries a duplicate `_id` and returns this for any other index.
    #[error(
        "sequence `{sequence}`: inserting {field} {id} into `{collection}` violates unique index {}: {message}",
        index.as_deref().unwrap_or("(unnamed)")
    )]
    DuplicateKey {
        /// The sequence.
        sequence: String,
        /// The target collection.
        collection: String,
        /// The field the sequence fills.
        field: &'static str,
        /// The id the document was given.
        id: i64,
        /// The index named by the server, when it says.
        index: Option<String>,
        /// The server's message.
        message: String,
    },

    /// The server refused the document for a reason other than a duplicate key (document
    /// validation, for example). Nothing was stored; the id field is unset again.
    #[error(
        "sequence `{sequence}`: the server refused {field} {id} in `{collection}`{}: {message}",
        code.map(|c| format!(" (code {c})")).unwrap_or_default()
    )]
    Refused {
        /// The sequence.
        sequence: String,
        /// The target collection.
        collection: String,
        /// The field the sequence fills.
        field: &'static str,
        /// The id the document was given.
        id: i64,
        /// The server's error code.
        code: Option<i32>,
        /// The server's message.
        message: String,
    },

    /// The document already carries an id;
    /// see [`Document`](crate::Document#ids-already-set).
    #[error(
        "sequence `{sequence}`: the document already has {field} {value}; insert fills only an unset \
         id ({unset}); resume_insert finishes an insert whose outcome was unknown"
    )]
    IdAlreadySet {
        /// The sequence.
        sequence: String,
        /// The field the sequence fills.
        field: &'static str,
        /// The id found in the document.
        value: i128,
        /// What an unset id looks like in this field: `0` or `None`.
        unset: &'static str,
    },

    /// The optimistic loop found every id it tried already taken.
    #[error(
        "sequence `{sequence}`: gave up after {attempts} attempts to insert into `{collection}`: \
         every {field} tried was taken by another writer (last: {last_id})"
    )]
    RetriesExhausted {
        /// The sequence.
        sequence: String,
        /// The target collection.
        collection: String,
        /// The field the sequence fills.
        field: &'static str,
        /// How many inserts were tried.
        attempts: u32,
        /// The last id tried.
        last_id: i64,
    },

    /// An option given at run time is out of range.
    #[error("sequence `{sequence}`: {option} = {value} is invalid: {reason}")]
    InvalidOption {
        /// The sequence.
        sequence: String,
        /// The option's name.
        option: &'static str,
        /// The value given.
        value: String,
        /// What is allowed.
        reason: &'static str,
    },

    /// A scope seqid cannot count in: a document's scope field holds a value that names
    /// no single scope (a Double, an array, a subdocument, ...), or a call named the scope
    /// wrongly (missing for a scoped sequence, given for an unscoped one, or with the
    /// wrong number of values). Nothing was reserved or written.
    #[error("sequence `{sequence}`: invalid scope {scope}: {reason}; nothing was written")]
    InvalidScope {
        /// The sequence.
        sequence: String,
        /// The scope value(s) at fault, as shown.
        scope: String,
        /// Why it is not a scope, and what is.
        reason: String,
    },

    /// The sequence fills a field other than `_id` and relies on a unique index on it (and
    /// its scope fields) that the collection lacks: the optimistic strategy needs it to
    /// refuse a number taken by another writer, and `resume_insert` to refuse a second
    /// copy of a document. Nothing was written; `T::create_indexes(&db)` creates it.
    #[error(
        "sequence `{sequence}`: `{collection}` has no unique index on {keys}, which {why}; \
         nothing was written: create it with `create_indexes` (or by hand)"
    )]
    MissingIndex {
        /// The sequence.
        sequence: String,
        /// The target collection.
        collection: String,
        /// The index's keys, as shown: `{ "project": 1, "number": 1 }`.
        keys: String,
        /// What relies on it.
        why: &'static str,
    },

    /// `insert_many` stored some documents and not others.
    #[error(transparent)]
    Bulk(Box<BulkError>),
}

impl Error {
    /// The sequence the failed operation was serving.
    ///
    /// ```
    /// let error = seqid::Error::IdAlreadySet {
    ///     sequence: "userid".into(),
    ///     field: "_id",
    ///     value: 7,
    ///     unset: "0",
    /// };
    /// assert_eq!(error.sequence(), "userid");
    /// ```
    pub fn sequence(&self) -> &str {
        match self {
            Error::Driver { sequence, .. }
            | Error::CounterNotNumeric { sequence, .. }
            | Error::CounterContended { sequence, .. }
            | Error::TransactionRequired { sequence, .. }
            | Error::CounterBelowStored { sequence, .. }
            | Error::NoCounter { sequence, .. }
            | Error::Overflow { sequence, .. }
            | Error::DuplicateKey { sequence, .. }
            | Error::IdAlreadySet { sequence, .. }
            | Error::RetriesExhausted { sequence, .. }
            | Error::OutcomeUnknown { sequence, .. }
            | Error::Refused { sequence, .. }
            | Error::ZeroId { sequence, .. }
            | Error::InvalidOption { sequence, .. }
            | Error::InvalidScope { sequence, .. }
            | Error::MissingIndex { sequence, .. } => sequence,
            Error::Bulk(bulk) => &bulk.sequence,
        }
    }

    pub(crate) fn driver(
        sequence: &str,
        action: impl Into<String>,
        source: mongodb::error::Error,
    ) -> Self {
        Error::Driver {
            sequence: sequence.to_owned(),
            action: action.into(),
            source: Box::new(source),
        }
    }
}

/// What `insert_many` did with each document when it did not store them all.
///
/// Every index of the input slice appears in exactly one of the three lists. Documents in
/// `inserted` keep their ids; documents in `failed` were refused by the server (or never
/// sent) and get their id field back unset, so they can be fixed and inserted again;
/// documents in `unknown` may be stored (the answer was lost and seqid found no proof
/// either way) and keep their ids, so that inserting them again is refused with
/// [`Error::IdAlreadySet`] instead of storing them twice.
/// [`resume_insert_many`](crate::Document::resume_insert_many) on the same slice finishes
/// the job: it sends the unknown ones again under their own ids (a copy already stored is
/// refused by the `_id` index and recognised) and inserts the failed ones anew.
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("userid", collection = "users")]
/// # struct User { #[serde(rename = "_id")] id: i64, email: String }
/// # async fn run(db: mongodb::Database, mut users: Vec<User>) -> Result<(), seqid::Error> {
/// match User::insert_many(&mut users, &db).await {
///     Ok(ids) => println!("stored {ids:?}"),
///     Err(seqid::Error::Bulk(bulk)) => {
///         for failed in &bulk.failed {
///             // users[failed.index].id is unset again: fix the document, insert it again.
///             eprintln!("{} not stored: {}", users[failed.index].email, failed.message);
///         }
///     }
///     Err(other) => return Err(other),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BulkError {
    /// The sequence.
    pub sequence: String,
    /// The target collection.
    pub collection: String,
    /// The field the sequence fills.
    pub field: &'static str,
    /// Indices (into the input slice) of the documents that are stored.
    pub inserted: Vec<usize>,
    /// Documents the server refused.
    pub failed: Vec<FailedInsert>,
    /// Documents whose fate could not be learned (they keep their ids): the answer was
    /// lost, or a copy sent again met a document at its id that may be its own or another
    /// writer's (see [`Document::resume_insert`](crate::Document::resume_insert)).
    pub unknown: Vec<usize>,
}

/// One document `insert_many` could not store.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FailedInsert {
    /// Its index in the input slice.
    pub index: usize,
    /// The id it was given (its id field is unset again); 0 if it was never given one.
    pub id: i64,
    /// The server's error code (11000 for a duplicate key); `None` when the request was
    /// never sent (the driver refused it, or no server could be reached).
    pub code: Option<i32>,
    /// Why it failed.
    pub message: String,
}

impl std::error::Error for BulkError {}

impl fmt::Display for BulkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 3;
        let total = self.inserted.len() + self.failed.len() + self.unknown.len();
        write!(
            f,
            "sequence `{}`: insert_many into `{}` stored {} of {} documents",
            self.sequence,
            self.collection,
            self.inserted.len(),
            total
        )?;
        if !self.failed.is_empty() {
            write!(f, "; {} failed:", self.failed.len())?;
            for failed in self.failed.iter().take(SHOWN) {
                write!(
                    f,
                    " [#{} {} {}: {}]",
                    failed.index, self.field, failed.id, failed.message
                )?;
            }
            if self.failed.len() > SHOWN {
                write!(f, " and {} more", self.failed.len() - SHOWN)?;
            }
        }
        if !self.unknown.is_empty() {
            write!(
                f,
                "; {} unknown (their ids are kept so they are not stored twice): {:?}",
                self.unknown.len(),
                self.unknown
            )?;
        }
        Ok(())
    }
}

/// Why seqid cannot count from a counter's value, for [`Error::CounterNotNumeric`]. A
/// whole number is reported only when the ids asked for would take it out of range, so
/// the value alone tells which cause it is.
fn not_countable(value: &Bson) -> &'static str {
    use crate::numeric::{DOUBLE_LIMIT, Decimal, decimal};
    const NOT_WHOLE: &str = "which is not a whole number: an id cannot come from it";
    match value {
        Bson::Double(v) if v.fract() == 0.0 && v.abs() >= DOUBLE_LIMIT => {
            "a Double from 2^53 on, where it can no longer hold every integer (2^53 + 1 rounds \
             back to 2^53): store it as a long (NumberLong) to go on"
        }
        Bson::Double(v) if v.fract() == 0.0 => {
            "a Double that the ids asked for would take to 2^53 or beyond, where it can no longer \
             hold every integer (2^53 + 1 rounds back to 2^53): store it as a long (NumberLong) to go on"
        }
        Bson::Double(_) => NOT_WHOLE,
        Bson::Decimal128(d) => match decimal(d) {
            Decimal::Integer(n) if i64::try_from(n).is_ok() => {
                "which the ids asked for would take beyond the range of an i64 id"
            }
            Decimal::Integer(_) | Decimal::Huge => "which is beyond the range of an i64 id",
            Decimal::NotWhole => NOT_WHOLE,
        },
        _ => {
            "which is not a number (seqid counts from an Int32, Int64, or a whole Double or Decimal128)"
        }
    }
}

/// The server's error code, whichever way the driver reports it.
pub(crate) fn server_code(error: &mongodb::error::Error) -> Option<i32> {
    use mongodb::error::{ErrorKind, WriteFailure};
    match &*error.kind {
        ErrorKind::Command(command) => Some(command.code),
        ErrorKind::Write(WriteFailure::WriteError(write)) => Some(write.code),
        ErrorKind::Write(WriteFailure::WriteConcernError(concern)) => Some(concern.code),
        _ => None,
    }
}

/// The index a duplicate key message names, in MongoDB's format
/// `E11000 duplicate key error collection: db.users index: email_1 dup key: { ... }`.
pub(crate) fn duplicate_index(message: &str) -> Option<&str> {
    let rest = &message[message.find(" index: ")? + " index: ".len()..];
    rest.split_whitespace().next()
}

/// For the callback of a transaction (`start_transaction().and_run(...)`), which returns
/// the driver's error: a seqid error the driver caused becomes that very error, with its
/// labels, so that a `TransientTransactionError` makes the driver run the transaction
/// again; any other is carried whole, as a custom error.
///
/// ```
/// let error = seqid::Error::IdAlreadySet {
///     sequence: "userid".into(),
///     field: "_id",
///     value: 7,
///     unset: "0",
/// };
/// let driver: mongodb::error::Error = error.into();
/// assert!(driver.get_custom::<seqid::Error>().is_some());
/// ```
impl From<Error> for mongodb::error::Error {
    fn from(error: Error) -> Self {
        match error {
            Error::Driver { source, .. } | Error::OutcomeUnknown { source, .. } => *source,
            other => mongodb::error::Error::custom(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_index_reads_mongodb_messages() {
        let id = "E11000 duplicate key error collection: app.users index: _id_ dup key: { _id: 5 }";
        assert_eq!(duplicate_index(id), Some("_id_"));
        let email = "E11000 duplicate key error collection: app.users index: email_1 dup key: { email: \"a\" }";
        assert_eq!(duplicate_index(email), Some("email_1"));
        assert_eq!(duplicate_index("UNIQUE constraint failed: users._id"), None);
    }

    #[test]
    fn a_counter_value_seqid_cannot_count_from_is_named_for_what_it_is() {
        let message = |value: Bson| {
            Error::CounterNotNumeric {
                sequence: "s".into(),
                counter: "\"s\"".into(),
                counters: "counters".into(),
                value: Box::new(value),
            }
            .to_string()
        };
        let decimal = |text: &str| Bson::Decimal128(text.parse().unwrap());
        let precision = message(Bson::Double(9_007_199_254_740_992.0));
        assert!(
            precision.contains("seq: 9007199254740992.0, a Double from 2^53 on"),
            "{precision}"
        );
        assert!(!precision.contains("not a whole number"), "{precision}");
        let next = message(Bson::Double(9_007_199_254_740_991.0));
        assert!(
            next.contains("seq: 9007199254740991.0, a Double that the ids asked for would take to 2^53 or beyond"),
            "{next}"
        );
        assert!(message(Bson::Double(2.5)).contains("seq: 2.5, which is not a whole number"));
        assert!(message(Bson::Double(1e300)).contains("seq: 1e300, a Double from 2^53 on"));
        assert!(message(decimal("2.5")).contains("seq: 2.5, which is not a whole number"));
        assert!(message(Bson::String("x".into())).contains("seq: \"x\", which is not a number"));
        assert!(message(decimal("1E+30")).contains("seq: 1E+30, which is beyond the range"));
        assert!(
            message(decimal("9223372036854775807"))
                .contains("which the ids asked for would take beyond the range of an i64 id")
        );
        assert!(message(Bson::Null).ends_with("it was left as it is"));
    }

    #[test]
    fn bulk_error_lists_what_failed() {
        let bulk = BulkError {
            sequence: "userid".into(),
            collection: "users".into(),
            field: "_id",
            inserted: vec![0, 2],
            failed: vec![FailedInsert {
                index: 1,
                id: 12,
                code: Some(11000),
                message: "dup".into(),
            }],
            unknown: vec![],
        };
        assert_eq!(
            Error::Bulk(Box::new(bulk)).to_string(),
            "sequence `userid`: insert_many into `users` stored 2 of 3 documents; 1 failed: [#1 _id 12: dup]"
        );
    }
}
