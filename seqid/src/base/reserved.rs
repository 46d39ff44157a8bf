//! An id reserved for a document built later (`T::reserve_ids`), as the insert that
//! stores it reads it: the id, the scope whose counter handed it out, and for a gapless
//! sequence the session whose transaction took it, which it lives and dies with. The
//! public token, [`Reserved`](crate::Reserved), holds one and nothing else.

use mongodb::bson::Document as BsonDocument;

use crate::base::error::Error;
use crate::base::scope::Scope;
use crate::base::sequence::Sequence;
use crate::base::session::Session;

/// One id reserved, and what it was reserved for.
pub(crate) struct Held {
    pub id: i64,
    pub scope: Scope,
    /// A gapless id's transaction, as far as seqid can tell it (boxed: rare).
    pub gapless: Option<Box<Gapless>>,
}

/// What tells a gapless id's transaction: the id of the session it ran in, and the ticket
/// of the reservation (`state::reservations`). The driver keeps a transaction's number to
/// itself; whether the insert runs in the same transaction of that session, and not a
/// later one after it aborted, the ticket and the counter read in the insert's
/// transaction tell (`source::counted::still_held`).
pub(crate) struct Gapless {
    pub session: BsonDocument,
    pub ticket: u64,
}

impl Held {
    /// `Ok` if a document of `scope`, inserted in `session`, may take this id, as far as
    /// can be told without a round trip: the scope it was reserved for
    /// ([`Error::ReservedScope`]), and for a gapless id a transaction of the session that
    /// reserved it ([`Error::ReservedTransaction`]).
    pub(crate) fn admits(
        &self,
        seq: &'static Sequence,
        scope: &Scope,
        session: &Session<'_>,
    ) -> Result<(), Error> {
        if self.scope != *scope {
            return Err(Error::ReservedScope {
                sequence: seq,
                id: self.id,
                reserved: self.scope.to_string().into(),
                document: scope.to_string().into(),
            });
        }
        let Some(gapless) = &self.gapless else {
            return Ok(());
        };
        let refused = |reason: &str| {
            Err(Error::ReservedTransaction {
                sequence: seq,
                id: self.id,
                reason: reason.into(),
            })
        };
        match session.transaction_session() {
            None => refused("this insert runs in no transaction"),
            Some(lsid) if *lsid != gapless.session => {
                refused("this insert runs in a transaction of another session")
            }
            Some(_) => Ok(()),
        }
    }
}
