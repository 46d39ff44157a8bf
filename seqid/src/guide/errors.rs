//! Errors: one type, and what each kind says.
//!
//! One type, [`seqid::Error`](crate::Error): the sequence the failed call was serving, said
//! once ([`sequence`](crate::Error::sequence); `None` only for a transaction's own commands
//! and the deployment's check, which serve no one sequence), and what went wrong, its
//! [`ErrorKind`](crate::error::ErrorKind) ([`kind`](crate::Error::kind),
//! [`into_kind`](crate::Error::into_kind)), non-exhaustive, as is each kind's set of fields:
//! match with `..`. Every message names the sequence and the offending value, and its
//! `Debug` (what `main` returning an error prints) shows the sequence by its name,
//! collection and field.
//!
//! The questions a caller asks are methods, so that code need not list variants:
//! [`is_outcome_unknown`](crate::Error::is_outcome_unknown) ("should I resume?": an answer
//! lost after a write was sent, of one document, a batch, an append, a replace or a
//! transaction's commit), [`is_invalid_input`](crate::Error::is_invalid_input) (refused for
//! what the caller gave, before anything was written: a client's error in a service),
//! [`driver_error`](crate::Error::driver_error) and
//! [`contains_label`](crate::Error::contains_label) (the driver's error and its labels,
//! `TransientTransactionError` among them). The kinds, by what the caller does next:
//!
//! Refused for what the caller gave, before anything was written ([`is_invalid_input`](crate::Error::is_invalid_input)): fix the input.
//!
//! - [`IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet): the document already carries an id (see [the
//!   attribute reference](super::attributes#an-id-already-set)). The message says what to do
//!   instead: an id the program gives the document is reserved (`reserve_id`) and given
//!   with its token (`.reserved(token)`); one from elsewhere goes in with the driver, then
//!   `sync_counter`; `resume_insert` is only for a document whose insert ended in
//!   `OutcomeUnknown` or was cancelled.
//! - [`ReservedElsewhere`](crate::error::ErrorKind::ReservedElsewhere): a reserved id given to an insert
//!   into another database, or through another `Sequences` handle: the id, both places;
//!   nothing written, the id a gap where it was reserved.
//! - [`ReservedScope`](crate::error::ErrorKind::ReservedScope): a reserved id given to a document of
//!   another scope: the id, both scopes. [`ReservedTransaction`](crate::error::ErrorKind::ReservedTransaction):
//!   a gapless reserved id inserted outside the transaction it was reserved in (in none, in
//!   another session's, or after it aborted), the id and which; nothing written.
//! - [`TransactionRequired`](crate::error::ErrorKind::TransactionRequired): a gapless insert outside a
//!   transaction; nothing written.
//! - [`InvalidOption`](crate::error::ErrorKind::InvalidOption): an option given at run time out of range
//!   (the option, the value, what is allowed).
//! - [`InvalidScope`](crate::error::ErrorKind::InvalidScope): the scope value at fault and why it is not one.
//! - [`InvalidCode`](crate::error::ErrorKind::InvalidCode): a display code set by the caller, or a string
//!   value that would make codes ambiguous: the field, the value and the format.
//! - [`NumberedLater`](crate::error::ErrorKind::NumberedLater): an insert of a type numbered later, whose
//!   drafts the driver stores; [`DraftNotFound`](crate::error::ErrorKind::DraftNotFound): `number_draft`'s
//!   filter found nothing; [`DraftAmbiguous`](crate::error::ErrorKind::DraftAmbiguous): it found more
//!   than one document, with how many. Nothing reserved or written.
//! - [`InvalidNaturalKey`](crate::error::ErrorKind::InvalidNaturalKey): a natural key that names no one
//!   document (a field missing, null or an array; a key named per call that is empty or names
//!   a field the insert fills), with the key and the value; nothing read or written.
//!
//! What was written is unknown ([`is_outcome_unknown`](crate::Error::is_outcome_unknown)): settle it.
//!
//! - [`OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown): the id, which the document keeps, and the
//!   driver's error (see [guarantees](super::guarantees)).
//! - [`TransactionOutcomeUnknown`](crate::error::ErrorKind::TransactionOutcomeUnknown): a transaction run by
//!   [`Transaction`](crate::action::Transaction) whose commit, sent again until its time
//!   limit, got no answer that said whether it committed: how many times and for how long; it
//!   committed whole or not at all, and a read tells which (see
//!   [transactions](super::transactions)).
//! - [`Bulk`](crate::error::ErrorKind::Bulk): what became of each document of an `insert_many`
//!   ([`BulkError`](crate::error::BulkError): `inserted`, `failed`, `unknown`).
//!
//! The driver or the server failed ([`driver_error`](crate::Error::driver_error)):
//!
//! - [`Driver`](crate::error::ErrorKind::Driver): the driver's error, with what seqid was doing.
//!
//! The counter cannot serve: an operator's to look at.
//!
//! - [`CounterNotNumeric`](crate::error::ErrorKind::CounterNotNumeric): the value the counter holds, left as
//!   it is, and why seqid cannot count from it: not a number, a fraction, a Double from 2^53 on or
//!   one the ids asked for would take there.
//! - [`CounterContended`](crate::error::ErrorKind::CounterContended): a counter seqid can only update as
//!   read, an Int64 beyond ±2^53 or one without `seq`, changed under every update conditional on
//!   its value.
//! - [`CounterBelowStored`](crate::error::ErrorKind::CounterBelowStored): `set_counter` or `reset_counter`
//!   below the largest id stored (the value asked for, the largest, the scope), without
//!   `.below_stored()`; nothing was changed.
//! - [`CounterMissing`](crate::error::ErrorKind::CounterMissing): the counter does not exist while the
//!   collection holds numbers of the sequence (in the scope) at or above its start: the largest
//!   stored, the counter looked for, what to check (most often the counter exists under another
//!   name: a wrong guess of another tool's default, named in the message for the layout's tool;
//!   a renamed sequence) and `sync_counter` to start above them on purpose. No counter made, no
//!   id taken.
//! - [`NoCounter`](crate::error::ErrorKind::NoCounter): a server answered the counter's upsert with no
//!   document, every time it was asked.
//! - [`Overflow`](crate::error::ErrorKind::Overflow): the id, what it must fit and where it came from (e.g. a
//!   counter at `i32::MAX` with an `i32` field, or one above a `1e300` `_id`); nothing is
//!   inserted, also for bulk.
//! - [`ZeroId`](crate::error::ErrorKind::ZeroId): the sequence handed out 0, which a plain integer field
//!   reads as unset; an `Option` field holds it.
//!
//! Refused by the server, or beaten by other writers every time: nothing written.
//!
//! - [`DuplicateKey`](crate::error::ErrorKind::DuplicateKey): the id and the index. A duplicate on the
//!   sequence's own index from a counter names ids stored by other means and
//!   [`sync_counter`](crate::SequenceOf::sync_counter).
//! - [`Refused`](crate::error::ErrorKind::Refused): the server's code and message.
//! - [`RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted): a call that retries while other
//!   writers win gave up; `items` says which: `None`, an insert's
//!   optimistic loop (attempts, time spent, the bound that ended it, the last id tried) or an
//!   `Some` array, an append of items on the conditional way (attempts, time spent, the array, the mark other
//!   writers kept moving first and the last value read, its 60 s budget; nothing appended).
//!
//! The deployment lacks what a sequence relies on:
//!
//! - [`MissingIndex`](crate::error::ErrorKind::MissingIndex): the unique index a field sequence or a natural
//!   key relies on, and what relies on it.
//! - [`Sharded`](crate::error::ErrorKind::Sharded): on a sharded cluster, a collection sharded so that a
//!   promise would not hold: the collection, its shard key, why, and what would make it hold
//!   (see [sharded clusters](super::sharded_clusters)). Nothing read or taken.
//!
//! Items and a document written back, each list from what is refused to what is unknown:
//!
//! - Items numbered inside their document ([items](super::items)):
//!   [`ItemNumberSet`](crate::error::ErrorKind::ItemNumberSet) (an item given with its number set: the
//!   array, the position, the value), [`ItemNumberOverflow`](crate::error::ErrorKind::ItemNumberOverflow),
//!   [`ItemsNotFound`](crate::error::ErrorKind::ItemsNotFound) (an append's filter found nothing),
//!   [`ItemsAmbiguous`](crate::error::ErrorKind::ItemsAmbiguous) (it found more than one document, with
//!   how many: name the document by its `_id`),
//!   [`ItemsNotArray`](crate::error::ErrorKind::ItemsNotArray) (what the field holds instead), all before
//!   anything is written; [`ItemsOutcomeUnknown`](crate::error::ErrorKind::ItemsOutcomeUnknown): an append
//!   sent and not answered, with the token that settles it.
//! - Writing a document back ([`replace`](crate::Document::replace)):
//!   [`ItemsStale`](crate::error::ErrorKind::ItemsStale) (an append landed after the document was read:
//!   the array, the document, both marks; read it again, apply the change, replace again),
//!   [`ReplaceNotFound`](crate::error::ErrorKind::ReplaceNotFound) (no stored document at its `_id`),
//!   [`ReplaceWithoutId`](crate::error::ErrorKind::ReplaceWithoutId) (no `_id`, or an unset id, to find it
//!   by: nothing sent), all with nothing written;
//!   [`ReplaceOutcomeUnknown`](crate::error::ErrorKind::ReplaceOutcomeUnknown): a replace sent and not
//!   answered, which landed once or not at all (replace it again: it is checked again).
//!
//! Messages name the field the sequence fills (`_id 7`, `number 1041`) and, for a scope's
//! counter, its `_id`. [`Error::sequence`](crate::Error::sequence) gives the sequence's name.
//! `seqid::Error` converts into `mongodb::error::Error`, keeping the driver's error and its labels
//! where there is one, for `?` inside a transaction's callback (see
//! [transactions](super::transactions)).
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("userid", collection = "users")]
//! # struct User { #[serde(rename = "_id")] id: i64, name: String }
//! # async fn run(db: mongodb::Database, mut users: Vec<User>) -> Result<(), seqid::Error> {
//! match User::insert_many(&mut users, &db).await {
//!     Ok(ids) => println!("stored {} users", ids.len()),
//!     Err(error) => {
//!         let seqid::error::ErrorKind::Bulk(bulk) = error.kind() else {
//!             return Err(error);
//!         };
//!         // Stored: they keep their ids. Refused: ids unset again. Unknown: ids kept.
//!         for failed in &bulk.failed {
//!             println!("user {} refused: {}", failed.index, failed.message);
//!         }
//!         User::resume_insert_many(&mut users, &db).await?; // settles the unknown ones
//!     }
//! }
//! # Ok(()) }
//! ```
