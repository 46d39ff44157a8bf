//! `seqid::Error`: every way taking an id or inserting can fail.

use std::fmt;
use std::time::Duration;

use mongodb::bson::Bson;
use mongodb::bson::oid::ObjectId;

use crate::base::bulk_error::BulkError;
use crate::base::server::noted;
use crate::schema::item::ItemsField;
use crate::schema::sequence::Sequence;

/// Everything that can go wrong while taking an id or inserting a document.
///
/// Each message names the sequence and the offending value, so a log line alone tells
/// what to fix. An `Error` holds the [`Sequence`] it was serving (its name, its
/// collection, its field; none for a failure that serves no one sequence, a transaction's
/// own commands or the deployment's check) once, and what went wrong, its [`ErrorKind`], boxed: 16 bytes, cheap to return.
/// The kinds and each kind's fields are `#[non_exhaustive]`: match [`kind`](Error::kind)
/// with `..`, and ask the questions a caller asks with the predicates ([`is_outcome_unknown`](Error::is_outcome_unknown),
/// [`is_invalid_input`](Error::is_invalid_input), [`driver_error`](Error::driver_error)).
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("userid", collection = "users")]
/// # struct User { #[serde(rename = "_id")] id: i32 }
/// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
/// use seqid::error::ErrorKind;
///
/// let mut user = User { id: 0 };
/// match user.insert(&db).await {
///     Ok(id) => println!("stored as {id}"),
///     Err(error) if error.is_outcome_unknown() => {
///         user.resume_insert(&db).await?; // the document kept its id
///     }
///     Err(error) => match error.kind() {
///         ErrorKind::Overflow { value, .. } => eprintln!("{value} does not fit an i32"),
///         _ => return Err(error),
///     },
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Error {
    /// The sequence the failed call was serving; `None` for a transaction's own commands
    /// and the deployment's check.
    sequence: Option<&'static Sequence>,
    kind: Box<ErrorKind>,
}

/// What went wrong, as an [`Error`] holds it, beside the sequence it was serving: the
/// kinds, grouped in the guide's [errors](crate::guide::errors) chapter by what the caller
/// does next (and asked of an `Error` by its predicates). Every message names the
/// sequence, the value and the cause.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The driver or the server failed (network, authentication, write concern, ...).
    #[non_exhaustive]
    Driver {
        /// What seqid was doing, e.g. "reserving ids in `counters`".
        action: Box<str>,
        /// The driver's error.
        source: Box<mongodb::error::Error>,
    },

    /// The counter document holds a `seq` seqid cannot count from: not a number, a number
    /// with a fraction, a Double from 2^53 on (where a Double can no longer hold every
    /// integer) or one the ids asked for would take there, or a Decimal128 they would take
    /// beyond the range of an `i64`. The counter is left as it was, and `value` is what it
    /// holds: the update applies only to a counter it leaves countable.
    #[non_exhaustive]
    CounterNotNumeric {
        /// The fields that find the counter document, as shown: `_id: "userid"`, for a
        /// scope `_id: "[\"ticket\",\"apollo\"]"`, or in another tool's layout
        /// `model: "Book", field: "_id"`.
        counter: Box<str>,
        /// The value the counter holds in its value field (`seq` in the tutorial's layout).
        value: Box<Bson>,
    },

    /// The counter kept changing between seqid reading it and updating it as read: other
    /// writers took ids from it every time. Only a counter the guarded update leaves to
    /// seqid's own check is updated so: an Int64 beyond ±2^53, or a counter document
    /// without `seq`. No id was taken.
    #[non_exhaustive]
    CounterContended {
        /// The fields that find the counter document, as shown (see
        /// [`ErrorKind::CounterNotNumeric`]).
        counter: Box<str>,
        /// How many updates conditional on the value read were sent.
        attempts: u32,
    },

    /// `set_counter` (or `reset_counter`) was asked to move the counter below the largest
    /// numeric `_id` already stored: the ids between are taken. Nothing was changed; call
    /// [`below_stored`](crate::action::SetCounter::below_stored) to do it all the same.
    #[non_exhaustive]
    CounterBelowStored {
        /// The scope, as shown (`{ "project": "apollo" }`); empty when unscoped.
        scope: Box<str>,
        /// The value asked for: the last id handed out.
        value: i64,
        /// The largest numeric `_id` stored.
        largest: i64,
    },

    /// The sequence's counter does not exist, and its collection already holds numbers of
    /// the sequence's field (in the scope) at or above its first id: a counter made now
    /// would hand those numbers out again. Most often the counter exists under another
    /// name: the sequence's name, `counters` or `layout` differs from the one that
    /// numbered the documents (another tool's default name, a renamed sequence). Checked
    /// on a counter's first use (the first `$inc` through a
    /// [`Sequences`](crate::Sequences) handle finds no counter); no counter was made, no
    /// id taken, nothing written. To start a counter above the numbers stored on purpose,
    /// call [`sync_counter`](crate::SequenceOf::sync_counter).
    #[non_exhaustive]
    CounterMissing {
        /// The fields that find the counter document, as shown (see
        /// [`ErrorKind::CounterNotNumeric`]).
        counter: Box<str>,
        /// The scope, as shown (`{ "project": "apollo" }`); empty when unscoped.
        scope: Box<str>,
        /// The largest number of the sequence's field stored in the scope.
        largest: Box<Bson>,
    },

    /// A `gapless` sequence was asked for an id outside a transaction (by an insert, or
    /// for a number on its own, [`NamedSequence`](crate::action::NamedSequence)): its ids come from a
    /// counter updated inside the caller's transaction, so that an aborted transaction
    /// takes its id back. Nothing was written.
    #[non_exhaustive]
    TransactionRequired {
        /// Whether a session (with no transaction running) was given.
        has_session: bool,
    },

    /// The server answered the counter's update (`findAndModify`, an upsert for a counter
    /// found by `_id`) with no document, every time it was asked, though the counter was
    /// there or just made. MongoDB never answers so; some compatible servers do, now and
    /// then, during the concurrent first use of a counter. No id was taken from this
    /// answer.
    #[non_exhaustive]
    NoCounter {
        /// The fields that find the counter document, as shown (see
        /// [`ErrorKind::CounterNotNumeric`]).
        counter: Box<str>,
        /// How many times the update was sent.
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
    #[non_exhaustive]
    OutcomeUnknown {
        /// The id the document was given, and keeps.
        id: i64,
        /// Why the outcome cannot be known.
        reason: &'static str,
        /// The driver's error.
        source: Box<mongodb::error::Error>,
    },

    /// An id does not fit the Rust type of the id field (or the `i64` range of a sequence).
    #[non_exhaustive]
    Overflow {
        /// The id that did not fit.
        value: i128,
        /// What it must fit: the id field's Rust type, or `i64`.
        target: &'static str,
        /// Where the number came from, e.g. the counter or the largest `_id` found.
        origin: Box<str>,
    },

    /// The sequence handed out 0, which a plain integer id field reads as unset (an
    /// `Option` field holds it as `Some(0)`). Nothing was inserted.
    #[non_exhaustive]
    ZeroId {
        /// The Rust type of the id field.
        target: &'static str,
        /// Where the 0 came from.
        origin: Box<str>,
    },

    /// The insert broke a unique index. Never retried for the counters and block strategies;
    /// the optimistic strategy retries a duplicate `_id` and returns this for any other index.
    #[non_exhaustive]
    DuplicateKey {
        /// The id the document was given.
        id: i64,
        /// The index named by the server, when it says.
        index: Option<Box<str>>,
        /// The server's message.
        message: Box<str>,
    },

    /// The server refused the document for a reason other than a duplicate key (document
    /// validation, for example). Nothing was stored; the id field is unset again.
    #[non_exhaustive]
    Refused {
        /// The id the document was given.
        id: i64,
        /// The server's error code.
        code: Option<i32>,
        /// The server's message.
        message: Box<str>,
    },

    /// The document already carries an id; see
    /// [`Document`](crate::Document#ids-already-set). An id the program gives a document is
    /// reserved with [`reserve_id`](crate::Document::reserve_id) and given with its token,
    /// [`.reserved(token)`](crate::action::Insert::reserved); one from elsewhere goes in with
    /// the driver, then [`sync_counter`](crate::SequenceOf::sync_counter).
    #[non_exhaustive]
    IdAlreadySet {
        /// The id found in the document.
        value: i128,
        /// What an unset id looks like in this field: `0` or `None`.
        unset: &'static str,
    },

    /// An id reserved for a document built later
    /// ([`Reserved`](crate::Reserved), from [`reserve_ids`](crate::Document::reserve_ids))
    /// was given to the insert of a document of another scope than the one it was
    /// reserved for: only its own scope's counter handed it out, and another scope's may
    /// hand it out too. Nothing was written; the id is still the caller's.
    #[non_exhaustive]
    ReservedScope {
        /// The id reserved.
        id: i64,
        /// The scope it was reserved for.
        reserved: Box<str>,
        /// The document's scope.
        document: Box<str>,
    },

    /// An id reserved for a document built later ([`Reserved`](crate::Reserved)) was
    /// given to an insert into another database than the one whose counter handed it out,
    /// or through another [`Sequences`](crate::Sequences) handle (a handle is one
    /// deployment; clones of it are the same handle): that database's counter hands the
    /// same id out too. Through bare `mongodb::Database`s only the names can be compared
    /// (the driver gives a `Client` no identity). Nothing was written; the id is a gap in
    /// the database it was reserved in, unless a document is stored under it there.
    #[non_exhaustive]
    ReservedElsewhere {
        /// The id reserved.
        id: i64,
        /// Where it was reserved: the database (`` database `shop` ``).
        reserved: Box<str>,
        /// Where the insert goes: the database, and `through another Sequences handle`
        /// when that is the difference.
        insert: Box<str>,
    },

    /// A gapless id reserved in a transaction was given to an insert that may not store
    /// it: one in no transaction, in a transaction of another session, or in a later
    /// transaction of the same session after the one that reserved it aborted (the
    /// counter, read in the insert's transaction, has not handed the id out: the abort took
    /// it back, and the next transaction takes it again). The id lives and dies with the
    /// transaction that reserved it. Nothing was written.
    #[non_exhaustive]
    ReservedTransaction {
        /// The id reserved.
        id: i64,
        /// Why this insert may not store it.
        reason: Box<str>,
    },

    /// A display code cannot be written: the document carries one already (`insert`
    /// writes it with the id), or a string it shows holds the character that ends that
    /// string in the code, which would let two documents' codes read alike. Nothing was
    /// reserved or written.
    #[non_exhaustive]
    InvalidCode {
        /// The display field and its format.
        display: &'static crate::schema::display::DisplayCode,
        /// The value at fault, with its field: `` `shop` = "north-east" ``.
        value: Box<str>,
        /// Why it cannot be written, and what to do.
        reason: Box<str>,
    },

    /// A call that retries while other writers win their races gave up: its time budget
    /// was spent (or its `max_attempts` made). `items` says which:
    ///
    /// - `None`: the optimistic loop of an insert (`insert`,
    ///   `insert_many`, `find_or_insert`, ...) found every id it tried already taken, until
    ///   its time budget (`.time_budget(..)`, `time_budget_ms`) was spent or its
    ///   `max_attempts` made; `last_id` is the last id it tried. Nothing was inserted.
    /// - `Some(items)`: an append of items on the conditional way (a server
    ///   without update pipelines) found, every time, that another writer had moved the
    ///   array's mark between its read and its update, for its whole budget of 60 s;
    ///   `last_id` is the last mark it read. Nothing was appended, the items stay
    ///   unnumbered: append again.
    #[non_exhaustive]
    RetriesExhausted {
        /// The array of the append that gave up (`append_<field>`); `None` for an insert's
        /// optimistic loop.
        items: Option<&'static ItemsField>,
        /// How many attempts were made (inserts tried, or conditional updates sent).
        attempts: u32,
        /// How long the call tried, from its first attempt.
        elapsed: Duration,
        /// The time budget, when it is what ended the loop; `None` when its
        /// `max_attempts` did.
        time_budget: Option<Duration>,
        /// For an insert, the last id tried; for an append, the last mark read.
        last_id: i64,
    },

    /// An option given at run time is out of range.
    #[non_exhaustive]
    InvalidOption {
        /// The option's name.
        option: &'static str,
        /// The value given.
        value: Box<str>,
        /// What is allowed, or why the value is refused.
        reason: Box<str>,
    },

    /// A scope seqid cannot count in: a document's scope field holds a value that names
    /// no single scope (a Double, an array, a subdocument, ...), or a call named the scope
    /// wrongly (missing for a scoped sequence, given for an unscoped one, or with the
    /// wrong number of values). Nothing was reserved or written.
    #[non_exhaustive]
    InvalidScope {
        /// The scope value(s) at fault, as shown.
        scope: Box<str>,
        /// Why it is not a scope, and what is.
        reason: Box<str>,
    },

    /// The sequence fills a field other than `_id` and relies on a unique index on it (and
    /// its scope fields) that the collection lacks: the optimistic strategy needs it to
    /// refuse a number taken by another writer, and `resume_insert` to refuse a second
    /// copy of a document. Nothing was written; `T::create_indexes(&db)` creates it.
    #[non_exhaustive]
    MissingIndex {
        /// The index's keys, as shown: `{ "project": 1, "number": 1 }`.
        keys: Box<str>,
        /// What relies on it.
        why: &'static str,
    },

    /// On a sharded cluster, a collection of the sequence is sharded so that one of its
    /// promises would not hold: the optimistic strategy's collection on a shard key that
    /// does not start its unique index (enforced then on each shard alone), or a counters
    /// collection on a key its counter's filter does not carry (an upsert must). Refused
    /// before any id is taken; the message says what would make it hold. See the guide's
    /// [sharded clusters](crate::guide::sharded_clusters) chapter, and
    /// [`deployment::check`](crate::deployment::check) for the whole picture.
    #[non_exhaustive]
    Sharded {
        /// The collection, `db.coll`.
        collection: Box<str>,
        /// Its shard key, as shown: `{ "email": 1 }`.
        shard_key: Box<str>,
        /// Why the promise would not hold, and what would make it hold.
        why: Box<str>,
    },

    /// A natural key [`find_or_insert`](crate::Document::find_or_insert) cannot find a
    /// document by: a key field the document does not hold, or holds as null or an array
    /// (which a unique index does not keep to one document), or a key named per call that
    /// is empty or names a field the insert fills. Nothing was reserved or written.
    #[non_exhaustive]
    InvalidNaturalKey {
        /// The key, as shown: `(email)`, or with the value at fault: `email = null`.
        key: Box<str>,
        /// Why it cannot find a document, and what to do.
        reason: Box<str>,
    },

    /// An insert of a type whose sequence is numbered later (`numbered = "later"`): its
    /// documents are stored as drafts, without a number, and numbered by
    /// [`number_draft`](crate::Document::number_draft). Nothing was written.
    #[non_exhaustive]
    NumberedLater {
        /// The call refused: `insert`, `insert_many`, ...
        operation: &'static str,
    },

    /// [`number_draft`](crate::Document::number_draft) found no document matching its
    /// filter. Nothing was reserved or written.
    #[non_exhaustive]
    DraftNotFound {
        /// The filter, as shown.
        filter: Box<str>,
    },

    /// [`number_draft`](crate::Document::number_draft) was given a filter that matches
    /// more than one document: it numbers one draft, and would have had to pick one the
    /// caller may not mean (an invoice issued before, beside the draft). Name the draft by
    /// what only it holds, its `_id`; [`number_drafts`](crate::Document::number_drafts)
    /// numbers every draft a filter finds. Refused before any id was taken; nothing was
    /// written.
    #[non_exhaustive]
    DraftAmbiguous {
        /// The filter, as shown.
        filter: Box<str>,
        /// How many documents it matches, as counted when it was found to match more than
        /// one; `None` if that count failed.
        matched: Option<u64>,
    },

    /// A transaction run by [`Transaction`](crate::action::Transaction) sent
    /// its commit, and sent it again for as long as its time limit allowed, and no answer
    /// said whether it committed (the connection or the server went away; a failover under
    /// it). It committed whole or not at all: what it wrote is all stored or none of it.
    /// Read one document it wrote to learn which; running it again would run its body a
    /// second time. See the guide's [transactions](crate::guide::transactions).
    #[non_exhaustive]
    TransactionOutcomeUnknown {
        /// How many times the commit was sent.
        commits: u32,
        /// How long the transaction ran, from its first start.
        elapsed: Duration,
        /// The driver's error of the last commit.
        source: Box<mongodb::error::Error>,
    },

    /// An item given to an insert or an append carries a number already: items are
    /// numbered by seqid, inside their document, and one that carries a number would be
    /// stored beside another item with the same one. Nothing was written.
    #[non_exhaustive]
    ItemNumberSet {
        /// The array.
        items: &'static ItemsField,
        /// The item's position among those given.
        position: usize,
        /// The number it carries.
        value: i128,
    },

    /// An item's number, or the array's mark, does not fit its field's type (or `i64`). At
    /// insert, and before an append is sent, nothing was written; an append's numbers are
    /// known once the server gave them, so one that does not fit the item's field is found
    /// after the append landed: the items stored hold it, the caller's items stay unnumbered.
    #[non_exhaustive]
    ItemNumberOverflow {
        /// The array.
        items: &'static ItemsField,
        /// The item's position among those given.
        position: usize,
        /// The number that did not fit.
        value: i128,
    },

    /// An append's filter matches no document: items are appended to a stored document
    /// only. Nothing was written.
    #[non_exhaustive]
    ItemsNotFound {
        /// The array.
        items: &'static ItemsField,
        /// The filter, as shown.
        filter: Box<str>,
    },

    /// The document an append's filter matches holds something other than an array (or
    /// null) in the items' field. Nothing was written.
    #[non_exhaustive]
    ItemsNotArray {
        /// The array.
        items: &'static ItemsField,
        /// The filter and what the field holds, as shown.
        found: Box<str>,
        /// The filter, as shown.
        filter: Box<str>,
    },

    /// An append's filter matches more than one document: an append goes to one document,
    /// and would have had to pick one the caller may not mean. Name the document by a
    /// filter only it matches, its `_id`. Refused before anything was written.
    #[non_exhaustive]
    ItemsAmbiguous {
        /// The array.
        items: &'static ItemsField,
        /// The filter, as shown.
        filter: Box<str>,
        /// How many documents it matches, as counted when it was found to match more than
        /// one; `None` if that count failed.
        matched: Option<u64>,
    },

    /// An append was sent, and no answer said whether it landed (the connection or the
    /// server went away, also after the driver's retry), and reading the document to tell
    /// failed too. The append carries `token`: call the same append again with
    /// [`.token(token)`](crate::action::AppendItems::token), which appends nothing if that
    /// token's append landed (it answers its numbers) and appends once otherwise.
    #[non_exhaustive]
    ItemsOutcomeUnknown {
        /// The array.
        items: &'static ItemsField,
        /// The append's token.
        token: ObjectId,
        /// The driver's error.
        source: Box<mongodb::error::Error>,
    },

    /// A [`replace`](crate::Document::replace) of a document with items was refused because
    /// the document is stale: another append landed in the array after the document was
    /// read, so its mark (`written`) is below the stored one (`stored`), or the stored mark
    /// moved between the replace's read and its write. Written, it would move the mark back
    /// (the next append would hand out a number again) and drop the items appended since.
    /// Nothing was written: read the document again, apply the change, replace again.
    #[non_exhaustive]
    ItemsStale {
        /// The array whose mark is stale.
        items: &'static ItemsField,
        /// The stored mark, as read (a mark missing or below "none yet" counts as none yet).
        stored: i64,
        /// The document's mark.
        written: i64,
        /// The document's `_id`, as shown.
        id: Box<str>,
    },

    /// A [`replace`](crate::Document::replace) found no stored document at the document's
    /// `_id`: a replace writes back a document that is stored (it was deleted since it was
    /// read, or never inserted). Nothing was written.
    #[non_exhaustive]
    ReplaceNotFound {
        /// The document's `_id`, as shown.
        id: Box<str>,
    },

    /// A [`replace`](crate::Document::replace) of a document that cannot name a stored one:
    /// it serializes no `_id` (or a null one), or its sequence numbers `_id` and the id is
    /// unset (it was never inserted, or its insert failed and unset it). Nothing was sent.
    #[non_exhaustive]
    ReplaceWithoutId {
        /// What the document holds instead of an `_id`: `0`, `None`, `missing`, `null`.
        found: Box<str>,
    },

    /// A [`replace`](crate::Document::replace) was sent and no answer said whether it landed
    /// (the connection or the server went away, also after the driver's retry). It landed
    /// once or not at all. Replace again: a replace is checked against the stored marks each
    /// time, so sent again it writes the same document once more, or, if an append landed
    /// since, is refused as stale ([`ErrorKind::ItemsStale`]).
    #[non_exhaustive]
    ReplaceOutcomeUnknown {
        /// The document's `_id`, as shown.
        id: Box<str>,
        /// The driver's error.
        source: Box<mongodb::error::Error>,
    },

    /// `insert_many` stored some documents and not others.
    Bulk(Box<BulkError>),
}

impl Error {
    /// An error of `kind`, met serving `sequence`.
    pub(crate) fn new(sequence: &'static Sequence, kind: ErrorKind) -> Self {
        Error {
            sequence: Some(sequence),
            kind: Box::new(kind),
        }
    }

    /// An error of `kind` that served no one sequence: a transaction's own commands.
    pub(crate) fn unsequenced(kind: ErrorKind) -> Self {
        Error {
            sequence: None,
            kind: Box::new(kind),
        }
    }

    /// What went wrong.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database) {
    /// use seqid::error::ErrorKind;
    ///
    /// let error = (User { id: 7 }).insert(&db).await.unwrap_err();
    /// assert!(matches!(error.kind(), ErrorKind::IdAlreadySet { value: 7, .. }));
    /// # }
    /// ```
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// What went wrong, taken out of the error.
    ///
    /// ```no_run
    /// # fn run(error: seqid::Error) {
    /// if let seqid::error::ErrorKind::Bulk(bulk) = error.into_kind() {
    ///     println!("{} stored", bulk.inserted.len());
    /// }
    /// # }
    /// ```
    pub fn into_kind(self) -> ErrorKind {
        *self.kind
    }

    /// The driver's error of a [`ErrorKind::Driver`], or the error as it is.
    pub(crate) fn into_driver(self) -> Result<Box<mongodb::error::Error>, Error> {
        match *self.kind {
            ErrorKind::Driver { source, .. } => Ok(source),
            _ => Err(self),
        }
    }

    /// What went wrong, to change (a batch's positions, as the caller's slice has them).
    pub(crate) fn kind_mut(&mut self) -> &mut ErrorKind {
        &mut self.kind
    }

    /// The sequence the failed call was serving (its name, collection and field), or
    /// `None` for a failure that serves no one sequence: a transaction's own commands
    /// (starting it, committing it), the deployment's check.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database) {
    /// if let Err(error) = (User { id: 7 }).insert(&db).await {
    ///     assert_eq!(error.sequence().map(|sequence| sequence.name), Some("userid"));
    /// }
    /// # }
    /// ```
    pub fn sequence(&self) -> Option<&'static Sequence> {
        self.sequence
    }

    /// A failure of the driver (or the server) while seqid was doing `action`, serving
    /// `sequence` (`None` for the deployment's check). Only makes the error: a driver error
    /// met is noted by the deployment's record first (`server::noted`).
    pub(crate) fn driver(
        sequence: impl Into<Option<&'static Sequence>>,
        action: impl Into<String>,
        source: mongodb::error::Error,
    ) -> Self {
        Error {
            sequence: sequence.into(),
            kind: Box::new(ErrorKind::Driver {
                action: action.into().into_boxed_str(),
                source: Box::new(source),
            }),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.sequence {
            Some(seq) => self.kind.describe(seq, f),
            None => self.kind.unsequenced(f),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The sequence as itself, not as `Some(..)`: a log line names it once, plainly.
        let mut error = f.debug_struct("Error");
        if let Some(sequence) = self.sequence {
            error.field("sequence", sequence);
        }
        error.field("kind", &self.kind).finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.kind {
            ErrorKind::Driver { source, .. }
            | ErrorKind::OutcomeUnknown { source, .. }
            | ErrorKind::TransactionOutcomeUnknown { source, .. }
            | ErrorKind::ItemsOutcomeUnknown { source, .. }
            | ErrorKind::ReplaceOutcomeUnknown { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

/// A driver's answer, its error made seqid's.
pub(crate) trait Doing<T> {
    /// The error as [`ErrorKind::Driver`] of `sequence`, met while doing what `action`
    /// says (written only on an error), noted first (`server::noted`).
    fn doing<A: Into<String>>(
        self,
        sequence: impl Into<Option<&'static Sequence>>,
        action: impl FnOnce() -> A,
    ) -> Result<T, Error>;
}

impl<T> Doing<T> for mongodb::error::Result<T> {
    fn doing<A: Into<String>>(
        self,
        sequence: impl Into<Option<&'static Sequence>>,
        action: impl FnOnce() -> A,
    ) -> Result<T, Error> {
        self.map_err(|error| Error::driver(sequence, action(), noted(error)))
    }
}

/// For the callback of the driver's `start_transaction().and_run(...)`, which returns the
/// driver's error: a seqid error the driver caused becomes that very error, with its
/// labels, so that a `TransientTransactionError` makes the driver run the transaction
/// again; any other is carried whole, as a custom error.
/// [`Transaction`](crate::action::Transaction) applies the same rules and gives
/// the `seqid::Error` back as it is.
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("userid", collection = "users")]
/// # struct User { #[serde(rename = "_id")] id: i64 }
/// # async fn run(db: seqid::Database) {
/// let error = (User { id: 7 }).insert(&db).await.unwrap_err(); // IdAlreadySet
/// let driver: mongodb::error::Error = error.into();
/// assert!(driver.get_custom::<seqid::Error>().is_some());
/// # }
/// ```
impl From<Error> for mongodb::error::Error {
    fn from(error: Error) -> Self {
        match *error.kind {
            ErrorKind::Driver { source, .. } | ErrorKind::OutcomeUnknown { source, .. } => *source,
            _ => mongodb::error::Error::custom(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::bulk_error::FailedInsert;
    use crate::schema::sequence::testing::counted;

    const SEQ: Sequence = counted("s", "users");

    #[test]
    fn a_counter_value_seqid_cannot_count_from_is_named_for_what_it_is() {
        let message = |value: Bson| {
            Error::new(
                &SEQ,
                ErrorKind::CounterNotNumeric {
                    counter: "_id: \"s\"".into(),
                    value: Box::new(value),
                },
            )
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

    /// The messages the variants' docs once showed, each naming the sequence, the value
    /// and the cause (the variants are `#[non_exhaustive]`: only seqid makes them).
    #[test]
    fn each_message_names_the_sequence_the_value_and_the_cause() {
        use crate::schema::item::testing::LINES;
        const USERS: Sequence = counted("userid", "users");
        const CUSTOMERS: Sequence = counted("customers.id", "customers");
        const ORDERS: Sequence = counted("order", "orders");
        let overflow = Error::new(
            &USERS,
            ErrorKind::Overflow {
                value: 2_147_483_648,
                target: "the id field's type i32",
                origin: "taken from the counter { _id: \"userid\" } in `counters`".into(),
            },
        );
        assert_eq!(
            overflow.to_string(),
            "sequence `userid`: id 2147483648 does not fit the id field's type i32 \
             (taken from the counter { _id: \"userid\" } in `counters`); nothing was inserted",
        );
        assert_eq!(overflow.sequence().map(|seq| seq.name), Some("userid"));
        // Each error, and what its message says.
        let cases = [
            (
                &CUSTOMERS,
                ErrorKind::CounterMissing {
                    counter: "_id: \"customers.id\"".into(),
                    scope: "".into(),
                    largest: Box::new(Bson::Int64(42)),
                },
                &["already holds _id up to 42", "sync_counter"][..],
            ),
            (
                &ORDERS,
                ErrorKind::RetriesExhausted {
                    items: Some(&LINES),
                    attempts: 900,
                    elapsed: Duration::from_secs(60),
                    time_budget: Some(Duration::from_secs(60)),
                    last_id: 4512,
                },
                &["to append items to `lines` of the document in `orders`"],
            ),
            (
                &ORDERS,
                ErrorKind::DraftAmbiguous {
                    filter: "{ \"customer\": 8 }".into(),
                    matched: Some(2),
                },
                &["matches 2 documents"],
            ),
            (
                &ORDERS,
                ErrorKind::ItemNumberSet {
                    items: &LINES,
                    position: 2,
                    value: 7,
                },
                &["lines[2].no is 7"],
            ),
            (
                &ORDERS,
                ErrorKind::ItemsAmbiguous {
                    items: &LINES,
                    filter: "{ \"customer\": 1 }".into(),
                    matched: Some(2),
                },
                &["matches 2 documents of `orders`"],
            ),
            (
                &ORDERS,
                ErrorKind::ItemsStale {
                    items: &LINES,
                    stored: 3,
                    written: 2,
                    id: "7".into(),
                },
                &["`lines_last` is 2, the stored one 3"],
            ),
        ];
        for (seq, kind, says) in cases {
            let message = Error::new(seq, kind).to_string();
            for said in says {
                assert!(message.contains(said), "{message}");
            }
        }
        let driver: mongodb::error::Error = Error::new(
            &USERS,
            ErrorKind::IdAlreadySet {
                value: 7,
                unset: "0",
            },
        )
        .into();
        assert!(driver.get_custom::<Error>().is_some());
    }

    /// A driver error met (`doing`) is noted by the deployment's record: one that says the
    /// routing changed makes what was read of the deployments stale. Making an error
    /// (`Error::driver`) notes nothing: no constructor has a side effect.
    #[test]
    fn a_routing_change_met_is_noted_where_it_is_met() {
        use crate::base::server::routing_epoch;
        let stale = || {
            let answer = mongodb::bson::doc! {
                "code": 13388, "codeName": "StaleConfig", "errmsg": "routing changed",
            };
            let command: mongodb::error::CommandError =
                mongodb::bson::from_document(answer).expect("a command error");
            mongodb::error::Error::from(mongodb::error::ErrorKind::Command(command))
        };
        let before = routing_epoch();
        let met: Result<(), Error> = Err(stale()).doing(&SEQ, || "reserving ids");
        assert!(routing_epoch() > before, "noted");
        let error = met.unwrap_err();
        assert_eq!(error.sequence().map(|seq| seq.name), Some("s"));
        assert!(
            error
                .to_string()
                .starts_with("sequence `s`: reserving ids failed:")
        );
        let unsequenced = Error::driver(None, "asking the deployment what it is", stale());
        assert_eq!(unsequenced.sequence(), None);
        assert!(
            unsequenced
                .to_string()
                .starts_with("asking the deployment what it is failed:"),
            "{unsequenced}"
        );
    }

    #[test]
    fn bulk_error_lists_what_failed() {
        let bulk = BulkError {
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
            Error::new(&SEQ, ErrorKind::Bulk(Box::new(bulk))).to_string(),
            "sequence `s`: insert_many into `users` stored 2 of 3 documents; 1 failed: [#1 _id 12: dup]"
        );
    }

    /// An append that gave up says it was appending, to which array of which collection,
    /// what beat it and its budget; an insert's message is as it was.
    #[test]
    fn retries_exhausted_says_what_the_call_was_doing() {
        use crate::schema::item::testing::LINES;
        const ORDERS: Sequence = counted("order", "orders");
        let exhausted = |items, time_budget| {
            Error::new(
                &ORDERS,
                ErrorKind::RetriesExhausted {
                    items,
                    attempts: 812,
                    elapsed: Duration::from_millis(60_004),
                    time_budget,
                    last_id: 4512,
                },
            )
        };
        let append = Some(&LINES);
        let sixty = Some(Duration::from_secs(60));
        assert_eq!(
            exhausted(append, sixty).to_string(),
            "sequence `order`: gave up after 812 attempts in 60004 ms to append items to \
             `lines` of the document in `orders`: every time, another writer moved the mark \
             `lines_last` first (last seen: 4512); the append's budget of 60 s is spent: \
             nothing was appended, the items are unnumbered. Append again; on a server without \
             update pipelines the appenders of one document in several processes race (those \
             of one process take turns), where MongoDB 4.2+ appends in one atomic update that \
             loses no race"
        );
        let text = exhausted(append, sixty).to_string();
        assert!(
            !text.contains("insert") && !text.contains("time_budget"),
            "{text}"
        );
        let budget = Some(Duration::from_millis(10_000));
        assert_eq!(
            exhausted(None, budget).to_string(),
            "sequence `order`: gave up after 812 attempts in 60004 ms to insert into `orders`: \
             every _id tried was taken by another writer (last: 4512); its time budget of \
             10000 ms is spent (`.time_budget(..)`, `time_budget_ms`)"
        );
        assert_eq!(
            exhausted(None, None).to_string(),
            "sequence `order`: gave up after 812 attempts in 60004 ms to insert into `orders`: \
             every _id tried was taken by another writer (last: 4512); its max_attempts = 812 \
             are made"
        );
    }
}
