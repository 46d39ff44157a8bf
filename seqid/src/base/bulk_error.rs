//! What `insert_many` reports when it did not store every document: [`BulkError`], carried
//! by [`ErrorKind::Bulk`](crate::error::ErrorKind::Bulk), and its [`FailedInsert`]s.

use std::fmt;

use crate::schema::sequence::Sequence;

/// What `insert_many` did with each document when it did not store them all.
///
/// Every index of the input slice appears in exactly one of the three lists. Documents in
/// `inserted` keep their ids; documents in `failed` were refused by the server (or never
/// sent) and get their id field back unset, so they can be fixed and inserted again;
/// documents in `unknown` may be stored (the answer was lost and seqid found no proof
/// either way) and keep their ids, so that inserting them again is refused with
/// [`ErrorKind::IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet) instead of storing them twice.
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
/// use seqid::error::ErrorKind;
///
/// match User::insert_many(&mut users, &db).await {
///     Ok(ids) => println!("stored {ids:?}"),
///     Err(error) => match error.kind() {
///         ErrorKind::Bulk(bulk) => {
///             for failed in &bulk.failed {
///                 // users[failed.index].id is unset again: fix the document, insert it again.
///                 eprintln!("{} not stored: {}", users[failed.index].email, failed.message);
///             }
///         }
///         _ => return Err(error),
///     },
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BulkError {
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

impl BulkError {
    /// The message, for the sequence `seq` the call was serving ([`Error`](crate::Error)'s).
    pub(crate) fn describe(&self, seq: &Sequence, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 3;
        let stored = self.inserted.len();
        let total = stored + self.failed.len() + self.unknown.len();
        let (name, collection) = (seq.name, seq.collection);
        write!(
            f,
            "sequence `{name}`: insert_many into `{collection}` stored {stored} of {total} documents"
        )?;
        if !self.failed.is_empty() {
            write!(f, "; {} failed:", self.failed.len())?;
            for failed in self.failed.iter().take(SHOWN) {
                let (index, id, message) = (failed.index, failed.id, &failed.message);
                write!(f, " [#{index} {} {id}: {message}]", seq.field)?;
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
