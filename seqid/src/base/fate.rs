//! What became of one document sent to the server with a given id ([`Fate`]), why a
//! document was not stored ([`Rejection`]), and how a write was sent ([`Sending`]), which
//! decides what a refusal means.

use crate::base::error::{Error, ErrorKind};
use crate::base::server::{DUPLICATE_KEY, duplicate_index, noted};
use crate::schema::sequence::Sequence;

/// What became of one document sent to the server with a given id.
///
/// The reasons are boxed: a fate travels through every layer of every insert, and one
/// that is stored (nearly all) then moves a tag and a pointer, not the reasons' strings
/// and the driver's error.
#[derive(Debug, Clone)]
pub(crate) enum Fate {
    /// Stored under its id: the server acknowledged this call's write of it (or, where
    /// the caller asserted [`Sending::content_is_unique`], a document equal to it was
    /// found there after a lost answer).
    Stored,
    /// Another writer's document holds its id: it is not stored, and never will be under
    /// it.
    Taken(Box<Rejection>),
    /// The server refused it, or it was never sent; it is not stored.
    Refused(Box<Rejection>),
    /// Not known: the request may have been applied, or may still be.
    Unknown(Box<Unknown>),
}

impl Fate {
    /// A document the server refused, or that was never sent.
    pub(crate) fn refused(rejection: Rejection) -> Fate {
        Fate::Refused(Box::new(rejection))
    }

    /// A document whose id another writer's document holds.
    pub(crate) fn taken(rejection: Rejection) -> Fate {
        Fate::Taken(Box::new(rejection))
    }

    /// A document left unknown by `error`, for the reason `why`.
    pub(crate) fn unknown(why: &'static str, error: &mongodb::error::Error) -> Fate {
        Fate::Unknown(Box::new(Unknown {
            why,
            error: error.clone(),
        }))
    }

    /// The answer for a single document sent with `id` (`value` in its id field): `Ok`
    /// when stored, else the error. Whether the id field is unset again is
    /// [`unsets_the_id`](Fate::unsets_the_id).
    pub(crate) fn conclude<V>(self, seq: &'static Sequence, id: i64, value: V) -> Result<V, Error> {
        match self {
            Fate::Stored => Ok(value),
            Fate::Unknown(unknown) => Err(Error::new(
                seq,
                ErrorKind::OutcomeUnknown {
                    id,
                    reason: unknown.why,
                    source: Box::new(unknown.error),
                },
            )),
            Fate::Taken(rejection) | Fate::Refused(rejection) => Err(rejection.into_error(seq, id)),
        }
    }

    /// Whether the document is known not to be stored under its id, so that its id field
    /// is unset again: a document of unknown fate keeps its id.
    pub(crate) fn unsets_the_id(&self) -> bool {
        matches!(self, Fate::Taken(_) | Fate::Refused(_))
    }
}

/// Why the fate of a document is unknown, and the driver's error that left it so.
#[derive(Debug, Clone)]
pub(crate) struct Unknown {
    pub why: &'static str,
    pub error: mongodb::error::Error,
}

/// Why an outcome is unknown, as the error message says it.
pub(crate) mod why {
    pub const NO_ANSWER: &str = "no answer came after the request was sent";
    pub const WRITE_CONCERN: &str = "the write was applied but its write concern was not satisfied, so it may yet be rolled back";
    pub const UNHELD_DUPLICATE: &str = "the server refused a duplicate id that no document held \
         when looked up; a copy of this very insert may still have been being applied";
    pub const HELD: &str = "a document already holds the id: this insert's earlier copy, or \
         another writer's, which equal content cannot tell apart (assert content_is_unique to \
         settle by content)";
    pub const SENT_AGAIN: &str =
        "this copy was refused or not sent, and an earlier copy may still land";
    pub const LOOKUP_FAILED: &str =
        "after a duplicate key, the id could not be looked up to see whether a document holds it";
    pub const IN_TRANSACTION: &str =
        "no answer came inside the caller's transaction, whose fate decides the document's";
}

/// The server's (or the driver's) reason for not storing a document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rejection {
    /// The server's error code; `None` when the request was never sent.
    pub code: Option<i32>,
    pub message: String,
    /// For a duplicate key, the unique index the server named.
    pub index: Option<String>,
    /// The driver's error, when the driver failed before sending.
    pub source: Option<mongodb::error::Error>,
}

impl Rejection {
    /// A write error the server answered with.
    pub(crate) fn write(code: i32, message: &str) -> Self {
        Rejection {
            code: Some(code),
            message: message.to_owned(),
            index: (code == DUPLICATE_KEY)
                .then(|| duplicate_index(message).map(str::to_owned))
                .flatten(),
            source: None,
        }
    }

    /// A document the driver failed to send, with `error`.
    pub(crate) fn not_sent(error: &mongodb::error::Error) -> Self {
        Rejection {
            message: error.to_string(),
            source: Some(error.clone()),
            ..Rejection::default()
        }
    }

    /// A document seqid did not send, or gave up on, for `message`.
    pub(crate) fn held_back(message: String) -> Self {
        Rejection {
            message,
            ..Rejection::default()
        }
    }

    pub(crate) fn is_duplicate_key(&self) -> bool {
        self.code == Some(DUPLICATE_KEY)
    }

    /// The error for a single document sent with `id`.
    pub(crate) fn into_error(self, seq: &'static Sequence, id: i64) -> Error {
        match self.source {
            _ if self.is_duplicate_key() => Error::new(
                seq,
                ErrorKind::DuplicateKey {
                    id,
                    index: self.index.map(String::into_boxed_str),
                    message: self.message.into_boxed_str(),
                },
            ),
            Some(source) => Error::driver(
                seq,
                format!("inserting {} {id} into `{}`", seq.field, seq.collection),
                noted(source),
            ),
            None => Error::new(
                seq,
                ErrorKind::Refused {
                    id,
                    code: self.code,
                    message: self.message.into_boxed_str(),
                },
            ),
        }
    }
}

/// How the documents of a write are sent, and what may settle their fate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sending {
    /// The documents were sent before under their ids (a resume). A refusal of this copy
    /// then says nothing of the earlier one, which may still be on its way, and a
    /// duplicate key may be the earlier copy itself.
    pub again: bool,
    /// The caller asserts that no other writer stores a document equal to one of these:
    /// a document equal to ours at our id is then ours.
    pub content_is_unique: bool,
}

impl Sending {
    /// Documents sent for the first time under their ids.
    pub(crate) fn first(content_is_unique: bool) -> Self {
        Sending {
            again: false,
            content_is_unique,
        }
    }

    /// Documents sent again under the ids they were sent with before (a resume).
    pub(crate) fn again(content_is_unique: bool) -> Self {
        Sending {
            again: true,
            content_is_unique,
        }
    }
}
