//! What you do with a document: [`Document`], the calls a user makes on a document of a
//! model (insert, find or insert, number a draft, replace, reserve its id, run a
//! transaction), implemented once for every [`Model`]. The type's sequence on its own (its
//! numbers, finds and counter) is [`SequenceOf`]'s, from [`Document::sequence`].

use std::future::Future;

use mongodb::bson::Document as BsonDocument;

use crate::api::action::find::Deserializable;
use crate::api::action::{FindOrInsert, Insert, NumberDraft, Reserve};
use crate::api::sequence_of::SequenceOf;
use crate::api::sequences::AsDatabase;
use crate::base::error::Error;
use crate::round_trip::indexes;
use crate::schema::kind::{NumberedLater, WithCounter};
use crate::schema::model::Model;

/// What you do with a model: insert it, find it, make its indexes. Every [`Model`] is a
/// `Document`; `#[derive(Document)]` implements [`Model`], and this trait comes with it.
///
/// The derive reads `#[seq_id("name", key = value, ...)]` and the field it fills: the
/// field serialized as `_id`, or the field that carries the attribute (see the crate's
/// notes on [fields and scopes](crate#any-field-per-scope)); everything else (reserving
/// ids, inserting, retrying) is ordinary code in this crate. "The id" below is that
/// field's value. Every future returned here is `Send`, so it can be awaited in `tokio::spawn`.
///
/// # Ids already set
///
/// Only an *unset* id (`0`, or `None` for an `Option`) is filled. A document whose id is
/// already set is refused with [`ErrorKind::IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet) before anything is reserved or
/// written: inserting a copy of a stored document must not quietly give it a second life.
/// An id reserved for the document beforehand ([`reserve_ids`](Document::reserve_ids)) is
/// given with its token, [`insert(..).reserved(token)`](Insert::reserved), never typed.
///
/// # Failures, lost answers and cancellation
///
/// A document is only ever written under the id it was given, so the `_id` index refuses
/// any second copy of it: no retry can store it twice. What a failed insert leaves in the
/// id field says what is known:
///
/// - **unset** (`0` or `None`): the document is not stored, and never will be under the
///   id it had. The server refused it ([`ErrorKind::DuplicateKey`](crate::error::ErrorKind::DuplicateKey), [`ErrorKind::Refused`](crate::error::ErrorKind::Refused)), it
///   was never sent ([`ErrorKind::Driver`](crate::error::ErrorKind::Driver) before any request), or no id could be taken. Fix
///   it if needed and insert it again.
/// - **still set**: it may be stored. The connection or the server went away after the
///   request was sent ([`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown)), or the insert's future was dropped
///   (cancelled, timed out) after the id was filled in. [`insert`](Document::insert)
///   refuses it ([`ErrorKind::IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet)); [`resume_insert`](Document::resume_insert)
///   finishes the job without storing it twice.
///
/// `Ok(id)`, or a document listed in [`BulkError::inserted`](crate::error::BulkError::inserted),
/// means the server acknowledged *this call's* write of the document. seqid never
/// concludes it from finding an equal document at the id, which may be another
/// caller's: a duplicate key answering a first send is another writer's document (the
/// driver's only earlier attempt, its retry on a replica set, is answered from the
/// server's record of the first one, never with a duplicate key), and an answer that
/// never came is [`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown). A caller whose documents each carry
/// something only it writes may say so with
/// [`content_is_unique`](crate::action::Insert::content_is_unique), and have such outcomes
/// settled by content.
///
/// On a replica set the driver itself retries a write once after a network error, with
/// the same transaction number, so a single dropped connection usually costs nothing.
///
/// # Cancellation
///
/// Dropping an insert's future (a `tokio::time::timeout`, a client that hung up on a
/// service) is safe at any await point, and never drops a driver operation half-way:
/// every round trip seqid makes outside the caller's session owns what it needs (the
/// document already serialized), and if the caller drops it before it ends, the rest of
/// it runs in a task of its own. (The driver's own futures, dropped mid-way, leave their connection
/// check-outs queued in the pool and wedge the client for seconds: see the guide's
/// [cancelled calls](crate::guide::cancellation).) What the drop leaves behind:
///
/// - **before the id is filled in** (waiting for a counter's `$inc`, a block, or the
///   largest id): nothing is written and the id stays unset; insert the document again.
///   The round trip, shared with the other callers waiting on it, runs to its end; the
///   ids it took for the cancelled caller go to the next callers of the
///   [`Sequences`](crate::Sequences) handle (through a bare database, a `counters` or
///   `block` id is then a gap).
/// - **after the id is filled in**: the write runs to its end and the document keeps its
///   id, as after a lost answer. [`resume_insert`](Document::resume_insert) (for many,
///   [`resume_insert_many`](Document::resume_insert_many)) settles it: through a
///   `Sequences` handle, it learns what became of that very write (waiting for it if it
///   is still under way), so it returns the id, inserts the document afresh, or says why
///   it was refused, exactly as the insert would have; through a bare database, it sends
///   the document again, and a copy found at the id is, as after a lost answer, its own
///   only if the caller asserts [`content_is_unique`](crate::action::Insert::content_is_unique).
///   An optimistic candidate stays reserved by the handle until that write ends.
///
/// An insert in the caller's session ([`Insert::session`](crate::action::Insert::session))
/// cannot send anything from a task of its own, since the session is the caller's
/// borrow: dropping it drops the driver's operation as dropping the driver's own future
/// would. Abort the transaction then (the `gapless` strategy always runs in one).
///
/// # Sessions and transactions
///
/// [`.session(&mut session)`](crate::action::Insert::session) runs an insert in the caller's
/// session, and in its transaction if one is running:
///
/// - **`counters` and `block`**: the document joins the transaction; the counter's
///   `$inc` runs outside it (with the counter's write concern, see
///   [`CounterWriteConcern`](crate::layout::CounterWriteConcern)). Concurrent transactions never
///   conflict on the counter, and a rollback leaves a gap but never hands an id out twice.
/// - **`optimistic`**: the maximum query and the insert both run in the transaction, so
///   the candidate is the largest id of the transaction's snapshot plus one. A taken id
///   cannot be retried inside a transaction (the failed write aborts it): the error keeps
///   the driver's `TransientTransactionError` label, and the caller's retry of the whole
///   transaction gets a fresh id.
/// - **`gapless`**: the counter's `$inc` joins the transaction too, so an aborted
///   transaction takes its id back: committed ids are `1, 2, 3, ...` with no gap, ever.
///   The transactions of one process take the counter in turn, whatever
///   [`Sequences`](crate::Sequences) handle or bare `mongodb::Database` they come through,
///   each once the one before has committed. Those of other processes conflict on it
///   (`WriteConflict`, labelled `TransientTransactionError`) and run again, as does one
///   that read in the transaction on its own before its insert and had to wait (its
///   snapshot is older than the commit it waited for; `number_draft` and `find_or_insert`
///   take their turn before their own reads). Outside a transaction the insert is refused
///   before anything is written ([`ErrorKind::TransactionRequired`](crate::error::ErrorKind::TransactionRequired)).
///
/// Inside a transaction nothing is retried or looked up after a failure: a failed write
/// aborts the transaction, whose fate decides the document's. Run it with
/// [`Transaction::new(&mut session).run(...)`](crate::action::Transaction), which runs it again
/// after a transient error, sends a commit whose result is unknown again alone, and gives
/// the body's own error back as it is (the guide's
/// [transactions](crate::guide::transactions)). Make the documents inside the body, so that
/// a run again starts from unset ids.
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
/// # struct Invoice { #[serde(rename = "_id")] id: i64, total: i64 }
/// # async fn run(client: mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
/// use seqid::action::Transaction;
///
/// let db = client.database("billing");
/// let mut session = client.start_session().await?;
/// let number = Transaction::new(&mut session)
///     .run(&db, |session, db| {
///         Box::pin(async move {
///             let mut invoice = Invoice { id: 0, total: 4200 };
///             invoice.insert(*db).session(session).await
///         })
///     })
///     .await?;
/// # Ok(()) }
/// ```
///
/// ```no_run
/// use seqid::Document;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Debug, Serialize, Deserialize, Document)]
/// #[seq_id("userid", collection = "users")]
/// struct User {
///     #[serde(rename = "_id")]
///     id: i64,
///     name: String,
/// }
///
/// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
/// let mut sarah = User { id: 0, name: "Sarah C.".into() };
/// let id = sarah.insert(&db).await?;
/// assert_eq!(id, sarah.id);
/// # Ok(()) }
/// ```
pub trait Document: Model {
    /// Takes the next id, stores it in the id field, inserts the document into
    /// [`Sequence::collection`](crate::Sequence::collection), and returns the id. Await the [`Insert`] it returns,
    /// after setting options by method: [`session`](Insert::session), and for the
    /// optimistic strategy [`time_budget`](Insert::time_budget) and
    /// [`max_attempts`](Insert::max_attempts).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64, name: String }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let mut bob = User { id: 0, name: "Bob D.".into() };
    /// let id: i64 = bob.insert(&db).await?;
    /// # Ok(()) }
    /// ```
    fn insert<'a>(&'a mut self, db: &'a impl AsDatabase) -> Insert<'a, Self> {
        Insert::new(self, db.route())
    }

    /// Inserts many documents with one reservation of ids and one `insert_many`, and
    /// returns their ids in order.
    ///
    /// If not every document is stored, the others stay inserted and [`ErrorKind::Bulk`](crate::error::ErrorKind::Bulk)
    /// says which is which: refused ones get their id field back unset; ones whose answer
    /// was lost keep their ids ([`BulkError::unknown`](crate::error::BulkError::unknown)), and
    /// [`resume_insert_many`](Document::resume_insert_many) finishes the job.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64, name: String }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let mut users: Vec<User> = ["Ada", "Grace"]
    ///     .into_iter()
    ///     .map(|name| User { id: 0, name: name.into() })
    ///     .collect();
    /// let ids = User::insert_many(&mut users, &db).await?;
    /// assert_eq!(ids.len(), 2);
    /// # Ok(()) }
    /// ```
    fn insert_many<'a>(
        docs: &'a mut [Self],
        db: &'a impl AsDatabase,
    ) -> Insert<'a, Self, false, true> {
        Insert::new_many(docs, db.route())
    }

    /// Finishes an insert whose outcome is unknown ([`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown), or a
    /// cancelled [`insert`](Document::insert)), and returns the id: makes sure the
    /// document is stored at most once, and says so only when it knows.
    ///
    /// A document with an unset id is simply inserted. A document that carries an id is
    /// sent again under that same id, and what the server answers is all seqid goes by:
    ///
    /// - **stored**: this copy was stored, so the earlier one never was (the `_id` index
    ///   will refuse it if it still arrives): `Ok(id)`.
    /// - **a document already holds the id**: it is this insert's earlier copy, landed
    ///   after all, *or another writer's* (with the optimistic strategy, another writer
    ///   may have taken the id after this insert's answer was lost; with counters, a
    ///   document written under the id by other means). Equal content does not tell them
    ///   apart: two callers inserting equal documents is ordinary. So the outcome stays
    ///   [`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown), the id kept, unless the caller asserted
    ///   [`content_is_unique`](crate::action::Insert::content_is_unique) (the document carries
    ///   something only its writer puts there, such as a request id): then a document
    ///   equal to this one, field by field (numbers by value), is its own, `Ok(id)`, and
    ///   a different one is another writer's: the optimistic strategy inserts the
    ///   document under a new id, while a counter's id (handed out once, so the document
    ///   there may be this one changed since it landed) gives [`ErrorKind::DuplicateKey`](crate::error::ErrorKind::DuplicateKey)
    ///   with the id left in place.
    /// - **no answer, or this copy refused or never sent**: [`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown)
    ///   again, the id kept (an earlier copy may still be on its way): call it again
    ///   later.
    ///
    /// So after a lost answer a caller learns for certain that its document is stored
    /// (`Ok`), or that it is not and will not be under that id (an error with the id
    /// unset). What no call can learn without `content_is_unique` is whether a document
    /// found at the id is its own: seqid then says it does not know, and never guesses.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64, name: String }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let mut ada = User { id: 0, name: "Ada".into() };
    /// let id = match ada.insert(&db).await {
    ///     Err(error) if error.is_outcome_unknown() => ada.resume_insert(&db).await?,
    ///     other => other?,
    /// };
    /// # Ok(()) }
    /// ```
    fn resume_insert<'a>(&'a mut self, db: &'a impl AsDatabase) -> Insert<'a, Self, true> {
        Insert::new(self, db.route())
    }

    /// Finishes an [`insert_many`](Document::insert_many) that did not store every
    /// document, on the same slice, and returns every id in order: documents that carry an
    /// id (stored, or of unknown fate) are sent again under it, as in
    /// [`resume_insert`](Document::resume_insert), and documents with an unset id (the
    /// failed ones, perhaps fixed since) are inserted with new ids. Nothing is stored
    /// twice. A document whose id a document already holds is reported in
    /// [`BulkError::unknown`](crate::error::BulkError::unknown), its id left in place, unless
    /// the caller asserted [`content_is_unique`](crate::action::Insert::content_is_unique)
    /// (see [`resume_insert`](Document::resume_insert) for what that settles).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64, name: String }
    /// # async fn run(db: mongodb::Database, mut users: Vec<User>) -> Result<(), seqid::Error> {
    /// use seqid::error::ErrorKind;
    ///
    /// let ids = match User::insert_many(&mut users, &db).await {
    ///     Err(error) if matches!(error.kind(), ErrorKind::Bulk(bulk) if bulk.failed.is_empty()) => {
    ///         // Only documents of unknown fate: the connection was lost.
    ///         User::resume_insert_many(&mut users, &db).await?
    ///     }
    ///     other => other?,
    /// };
    /// assert_eq!(ids.len(), users.len());
    /// # Ok(()) }
    /// ```
    fn resume_insert_many<'a>(
        docs: &'a mut [Self],
        db: &'a impl AsDatabase,
    ) -> Insert<'a, Self, true, true> {
        Insert::new_many(docs, db.route())
    }

    /// The stored document with this one's natural key (its fields marked `#[seq_key]`),
    /// inserted with the next id only if no document holds the key: `self` becomes the
    /// stored document either way (its ids, its display codes, its fields as stored), and
    /// the [`Entry`](crate::Entry) says whether this call inserted it. A key found takes no id.
    /// [`.by(&["email"])`](FindOrInsert::by) names the key for this call instead, for a type
    /// that declares none (awaiting without it is then a compile error that says so,
    /// [`NaturalKeyed`](crate::kind::NaturalKeyed)).
    ///
    /// It relies on the key's unique index, made by
    /// [`create_indexes`](Document::create_indexes) ([`ErrorKind::MissingIndex`](crate::error::ErrorKind::MissingIndex) before any id
    /// is taken without one). When several callers of one new key race, the index stores
    /// one document and every caller gets it; what a lost race costs is the strategy's:
    /// no id with `optimistic` and `block` (its id goes back to the handle's live block),
    /// none with `gapless` (the conflict aborts the caller's transaction, whose retry finds
    /// the winner), a gap with `counters` (counted in
    /// [`Stats::races_lost`](crate::Stats::races_lost)). The guide's
    /// [find-or-insert](crate::guide::find_or_insert) chapter spells the races out.
    ///
    /// A lost answer is settled by the key where it can; [`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown) leaves
    /// the document with its ids, and calling `find_or_insert` again with it finishes the
    /// job without storing it twice. A key field missing, null or an array is
    /// [`ErrorKind::InvalidNaturalKey`](crate::error::ErrorKind::InvalidNaturalKey).
    ///
    /// ```no_run
    /// use seqid::{Document, Entry};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize, Document)]
    /// #[seq_id("customer", collection = "customers")]
    /// struct Customer {
    ///     #[serde(rename = "_id")]
    ///     id: i64,
    ///     #[seq_key]
    ///     email: String,
    ///     name: String,
    /// }
    ///
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// Customer::create_indexes(&db).await?; // ["_id_", "email_1"]
    /// let mut ada = Customer { id: 0, email: "ada@example.com".into(), name: "Ada".into() };
    /// let entry = ada.find_or_insert(&db).await?;
    /// assert_eq!(entry, Entry::Inserted); // ada.id == 1
    ///
    /// let mut again = Customer { id: 0, email: "ada@example.com".into(), name: "A.".into() };
    /// assert_eq!(again.find_or_insert(&db).await?, Entry::Found);
    /// assert_eq!((again.id, again.name.as_str()), (1, "Ada")); // the stored one
    /// # Ok(()) }
    /// ```
    fn find_or_insert<'a>(&'a mut self, db: &'a impl AsDatabase) -> FindOrInsert<'a, Self>
    where
        Self: Deserializable,
    {
        FindOrInsert::new(self, db.route())
    }

    /// [`find_or_insert`](Document::find_or_insert) for many documents: one lookup for all
    /// their keys, one `insert_many` (one reservation per scope) for those not found, and
    /// an [`Entry`](crate::Entry) per document, in order. Every document becomes the
    /// stored one; a later document of a key already in the slice gets the first's
    /// (`Found`). A race lost or an answer lost is settled as for one document, with one
    /// more lookup for all of them. What cannot be settled is [`ErrorKind::Bulk`](crate::error::ErrorKind::Bulk), whose
    /// `inserted` lists every document that holds its stored document (found ones too),
    /// `failed` those refused (their ids unset) and `unknown` those whose answer was lost
    /// (their ids kept): calling it again with the same slice finishes the job.
    ///
    /// Adopting seqid on an existing collection of customers, say, is one call per batch
    /// of them: the ones stored are found, the others numbered.
    ///
    /// ```no_run
    /// # use seqid::{Document, Entry};
    /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
    /// # #[seq_id("customer", collection = "customers")]
    /// # struct Customer { #[serde(rename = "_id")] id: i64, #[seq_key] email: String }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let mut batch: Vec<Customer> = ["ada@example.com", "bob@example.com"]
    ///     .into_iter()
    ///     .map(|email| Customer { id: 0, email: email.into() })
    ///     .collect();
    /// let entries = Customer::find_or_insert_many(&mut batch, &db).await?;
    /// let new = entries.iter().filter(|e| e.is_inserted()).count();
    /// # Ok(()) }
    /// ```
    fn find_or_insert_many<'a>(
        docs: &'a mut [Self],
        db: &'a impl AsDatabase,
    ) -> FindOrInsert<'a, Self, (), true>
    where
        Self: Deserializable,
    {
        FindOrInsert::new_many(docs, db.route())
    }

    /// Gives the stored draft that `filter` finds its number, if it has none yet, with its
    /// display codes, for a sequence numbered later (`numbered = "later"`): a draft
    /// invoice, saved without a number, numbered when it is issued. One conditional update
    /// sets the number where none is, so two callers numbering one draft at once give it
    /// one number; the other learns it ([`Numbered::by_this_call`](crate::Numbered) is
    /// `false`, as for a draft numbered before), and its own id costs what the strategy
    /// promises (given back with `block`, a gap with `counters`, counted in
    /// [`Stats::races_lost`](crate::Stats::races_lost); none with `gapless`, whose number is
    /// taken in the caller's transaction, together with the caller's own change:
    /// [`.set(...)`](crate::action::NumberDraft::set) and
    /// [`.session(...)`](crate::action::NumberDraft::session)). The filter must find one
    /// document: none is [`ErrorKind::DraftNotFound`](crate::error::ErrorKind::DraftNotFound), more than one [`ErrorKind::DraftAmbiguous`](crate::error::ErrorKind::DraftAmbiguous)
    /// (name the draft by its `_id`); a draft without a number whose code field is not
    /// empty is refused ([`ErrorKind::InvalidCode`](crate::error::ErrorKind::InvalidCode): the code is written with the number, and
    /// never replaces what was stored). Each refusal comes before any id is taken. The
    /// guide's [numbering later](crate::guide::numbering_later) chapter spells the races
    /// out.
    ///
    /// ```no_run
    /// use mongodb::bson::{doc, oid::ObjectId};
    /// use seqid::action::Transaction;
    /// use seqid::Document;
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize, Document)]
    /// #[seq_id(collection = "invoices")]
    /// struct Invoice {
    ///     #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    ///     id: Option<ObjectId>,
    ///     year: i32,
    ///     #[seq_id("invoice", scope = "year", strategy = "gapless", numbered = "later")]
    ///     number: Option<i64>,
    ///     #[seq_display("INV-{year}-{number:04}")]
    ///     code: String,
    ///     status: String,
    /// }
    ///
    /// # async fn run(client: mongodb::Client, db: seqid::Database) -> Result<(), Box<dyn std::error::Error>> {
    /// Invoice::create_indexes(&db).await?;
    /// let draft = Invoice { id: None, year: 2026, number: None, code: String::new(), status: "draft".into() };
    /// let id = Invoice::collection(&db).insert_one(&draft).await?.inserted_id;
    /// // ... later, when it is issued, in a transaction (gapless):
    /// let mut session = client.start_session().await?;
    /// let issued = Transaction::new(&mut session)
    ///     .run((&db, &id), |session, (db, id)| {
    ///         Box::pin(async move {
    ///             Invoice::number_draft(*db, doc! { "_id": id.clone() })
    ///                 .set(doc! { "status": "issued" })
    ///                 .session(session)
    ///                 .await
    ///         })
    ///     })
    ///     .await?;
    /// println!("{}", issued.doc.code); // INV-2026-0001
    /// # Ok(()) }
    /// ```
    fn number_draft(db: &impl AsDatabase, filter: BsonDocument) -> NumberDraft<'_, Self>
    where
        Self: NumberedLater + Deserializable,
    {
        NumberDraft::new(db.route(), filter)
    }

    /// Numbers every stored draft `filter` finds that has no number yet, in the order given
    /// with [`.order(...)`](crate::action::NumberDraft::order) (`_id` ascending by default),
    /// with one reservation of ids per scope, and returns the documents this call numbered,
    /// in that order: adopting seqid on a collection of unnumbered documents, or issuing a
    /// day's drafts at once. A draft another caller numbers meanwhile keeps that number and
    /// is left out. A draft found without a number but with a code is refused, before any
    /// id is taken ([`ErrorKind::InvalidCode`](crate::error::ErrorKind::InvalidCode)), as by
    /// [`number_draft`](Document::number_draft).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # use mongodb::bson::doc;
    /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
    /// # #[seq_id(collection = "invoices")]
    /// # struct Invoice { #[serde(rename = "_id", skip_serializing_if = "Option::is_none")] id: Option<mongodb::bson::oid::ObjectId>,
    /// #   #[seq_id("invoice", numbered = "later")] number: Option<i64>, status: String, created: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let issued = Invoice::number_drafts(&db, doc! { "status": "approved" })
    ///     .order(doc! { "created": 1 })
    ///     .set(doc! { "status": "issued" })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    fn number_drafts(db: &impl AsDatabase, filter: BsonDocument) -> NumberDraft<'_, Self, true>
    where
        Self: NumberedLater + Deserializable,
    {
        NumberDraft::new(db.route(), filter)
    }

    /// The typed collection the documents go to
    /// ([`Sequence::collection`](crate::Sequence::collection)), for
    /// everything else the driver does.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64, name: String }
    /// # async fn run(db: mongodb::Database) -> mongodb::error::Result<()> {
    /// let users: mongodb::Collection<User> = User::collection(&db);
    /// let count = users.count_documents(mongodb::bson::doc! {}).await?;
    /// # Ok(()) }
    /// ```
    fn collection(db: &impl AsDatabase) -> mongodb::Collection<Self> {
        db.route().db.collection(Self::SEQUENCE.collection)
    }

    /// Writes the document back whole over the stored one with its `_id` (as serialized):
    /// the way to save a document read, changed in memory, and written back, where the
    /// driver's `replace_one` would move an array's mark back. Await the
    /// [`Replace`](crate::action::Replace) it returns for `()`; set
    /// [`session`](crate::action::Replace::session) by method.
    ///
    /// For a type with items ([`Model::ITEMS`]), the stored marks and hidden lists of
    /// recent appends are read, and a document whose mark is below the stored one (an
    /// append landed after it was read, which a plain `replace_one` would undo, handing its
    /// numbers out again) is refused with [`ErrorKind::ItemsStale`](crate::error::ErrorKind::ItemsStale), nothing written: read it
    /// again, apply the change, replace again. A mark equal or above is written, by a
    /// `replace_one` conditioned on the marks and lists as read, with the hidden lists kept
    /// as stored (so an append sent again with its token is still recognised). A type
    /// without items is one `replace_one` by `_id`. Refused before anything is sent: a
    /// document with no `_id`, or an unset id where the sequence numbers `_id`
    /// ([`ErrorKind::ReplaceWithoutId`](crate::error::ErrorKind::ReplaceWithoutId)); then no stored document at the `_id` is
    /// [`ErrorKind::ReplaceNotFound`](crate::error::ErrorKind::ReplaceNotFound), and a replace sent and not answered
    /// [`ErrorKind::ReplaceOutcomeUnknown`](crate::error::ErrorKind::ReplaceOutcomeUnknown) (replace it again). The items are written as the
    /// document holds them: append new ones with `append_<field>`.
    ///
    /// ```no_run
    /// use mongodb::bson::doc;
    /// use seqid::{Document, Item};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize, Item)]
    /// struct Line { #[seq_no] no: i64, sku: String, quantity: u32 }
    ///
    /// #[derive(Serialize, Deserialize, Document)]
    /// #[seq_id("order", collection = "orders")]
    /// struct Order {
    ///     #[serde(rename = "_id")]
    ///     id: i64,
    ///     #[seq_items(last = "lines_last")]
    ///     lines: Vec<Line>,
    ///     lines_last: i64,
    /// }
    ///
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// use seqid::error::ErrorKind;
    ///
    /// loop {
    ///     let mut order = Order::sequence().find(&db, 7).await?.expect("stored");
    ///     order.lines.retain(|line| line.sku != "B-2");
    ///     match order.replace(&db).await {
    ///         Err(error) if matches!(error.kind(), ErrorKind::ItemsStale { .. }) => continue, // read it again
    ///         done => break done?,
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    fn replace<'a>(&'a self, db: &'a impl AsDatabase) -> crate::api::action::Replace<'a, Self> {
        crate::api::action::Replace::new(self, db.route())
    }

    /// Creates the indexes the sequence relies on (every sequence's, for a type that
    /// declares several), if missing, and returns their names.
    /// A sequence on `_id` relies on `_id`'s own index, which always exists (`["_id_"]`).
    /// A sequence on another field relies on a unique index on its scope fields and the
    /// field, in that order, named as MongoDB names it by default
    /// (`project_1_number_1`): the optimistic strategy needs it to refuse a number
    /// another writer took, and [`resume_insert`](Document::resume_insert) to refuse a
    /// second copy of a document; both return [`ErrorKind::MissingIndex`](crate::error::ErrorKind::MissingIndex) without it. Run it
    /// at start-up, as the driver's `create_index` is: it is cheap when the index exists.
    /// An index made by other means on the same fields counts too; keep MongoDB's default
    /// name for it, by which seqid tells a duplicate number from a duplicate elsewhere.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id(collection = "tickets")]
    /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project", strategy = "optimistic")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let names = Ticket::create_indexes(&db).await?;
    /// assert_eq!(names, ["project_1_number_1"]);
    /// # Ok(()) }
    /// ```
    fn create_indexes(
        db: &impl AsDatabase,
    ) -> impl Future<Output = Result<Vec<String>, Error>> + Send {
        indexes::create_all::<Self>(db.route())
    }

    /// The type's sequence ([`Model::SEQUENCE`]), typed: its numbers on their own with the
    /// options the type declares ([`next`](SequenceOf::next), [`next_n`](SequenceOf::next_n)),
    /// its finds and its counter's operations. The way to take a number no document of this
    /// type carries; a number for a document of the type is
    /// [`reserve_id`](Document::reserve_id)'s. A type with several sequences has one of
    /// these per sequence too, `<field>_sequence()`.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("order", collection = "orders", start = 1001)]
    /// # struct Order { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let number = Order::sequence().next(&db).await?; // 1001, from the type's counter
    /// # Ok(()) }
    /// ```
    fn sequence() -> SequenceOf<Self, Self::Kind, Self::Scope> {
        SequenceOf::__new(&Self::SEQUENCE)
    }

    /// Reserves the next `n` ids of the sequence for documents built later, and returns a
    /// [`Reserved`](crate::Reserved) token for each, their ids increasing: show a number
    /// before its document exists, then store the document under it with
    /// [`insert(..).reserved(token)`](Insert::reserved). The ids are taken as inserts take
    /// theirs, from the same counter and, through a [`Sequences`](crate::Sequences)
    /// handle, the same allocator and live block (`n` 0: none, with no round trip). For a
    /// scoped sequence, name the scope with [`.scope(...)`](Reserve::scope); a gapless
    /// sequence reserves in the caller's transaction ([`.session(...)`](Reserve::session)).
    ///
    /// A token never inserted is a gap, as an insert that fails after taking its id; a
    /// gapless token lives and dies with its transaction (an aborted transaction takes its
    /// id back). The optimistic strategy keeps no counter to reserve from: on such a type
    /// this is a compile error. The guide's [numbers on their
    /// own](crate::guide::numbers#a-models-next-id-before-its-document) has the details.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("order", collection = "orders")]
    /// # struct Order { #[serde(rename = "_id")] id: i64, total: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let tokens = Order::reserve_ids(&db, 2).await?;
    /// let numbers: Vec<i64> = tokens.iter().map(|token| token.id()).collect();
    /// for (token, total) in tokens.into_iter().zip([4200, 1700]) {
    ///     Order { id: 0, total }.insert(&db).reserved(token).await?;
    /// }
    /// # Ok(()) }
    /// ```
    fn reserve_ids(db: &impl AsDatabase, n: u64) -> Reserve<'_, Self, Self::Scope, true>
    where
        Self::Kind: WithCounter,
    {
        Reserve::new(db.route(), n)
    }

    /// Reserves the next id of the sequence for a document built later:
    /// [`reserve_ids`](Document::reserve_ids) for one, awaited for one
    /// [`Reserved`](crate::Reserved) token.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("order", collection = "orders")]
    /// # struct Order { #[serde(rename = "_id")] id: i64, total: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let token = Order::reserve_id(&db).await?;
    /// let mut order = Order { id: 0, total: 4200 };
    /// order.insert(&db).reserved(token).await?;
    /// # Ok(()) }
    /// ```
    fn reserve_id(db: &impl AsDatabase) -> Reserve<'_, Self>
    where
        Self::Kind: WithCounter,
    {
        Reserve::new(db.route(), 1)
    }
}

impl<T: Model> Document for T {}
