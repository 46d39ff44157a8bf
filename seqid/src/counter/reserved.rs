//! An id reserved for a document built later (`T::reserve_ids`), as the insert that
//! stores it reads it: the id, the database (and handle) and scope whose counter handed it
//! out, and for a gapless sequence the session whose transaction took it, which it lives
//! and dies with. The public token, [`Reserved`](crate::Reserved), holds one and nothing
//! else.

use mongodb::bson::Document as BsonDocument;

use crate::base::error::{Error, ErrorKind};
use crate::base::session::Session;
use crate::fields::scope::Scope;
use crate::schema::sequence::Sequence;

/// One id reserved, and what it was reserved for.
pub(crate) struct ReservedId {
    pub id: i64,
    pub scope: Scope,
    /// Where its counter is: another database's (or deployment's) hands the id out too.
    pub origin: Origin,
    /// A gapless id's transaction, as far as seqid can tell it (boxed: rare).
    pub gapless: Option<Box<Gapless>>,
}

/// A database a reserved id is taken from or inserted into: its name, and the
/// [`Sequences`](crate::Sequences) handle it goes through, by the handle's registry (one
/// deployment; clones of a handle share it). A bare `mongodb::Database` has none: the
/// driver gives a `Client` no identity, so there the name is all that can be compared.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Origin {
    pub db: Box<str>,
    pub handle: Option<u64>,
}

impl Origin {
    /// Why an id reserved at `self` may not be inserted at `insert`, in the words of
    /// [`ErrorKind::ReservedElsewhere`]: `(reserved, insert)`.
    fn differs(&self, insert: &Origin) -> Option<(String, String)> {
        let named = |origin: &Origin| format!("database `{}`", origin.db);
        if self.db != insert.db {
            return Some((named(self), named(insert)));
        }
        match (self.handle, insert.handle) {
            (Some(reserved), Some(inserted)) if reserved != inserted => Some((
                named(self),
                format!("{} through another Sequences handle", named(insert)),
            )),
            // A bare database on either side: nothing more can be told.
            _ => None,
        }
    }
}

/// What tells a gapless id's transaction: the id of the session it ran in, and the ticket
/// of the reservation (`counter::tickets`). The driver keeps a transaction's number to
/// itself; whether the insert runs in the same transaction of that session, and not a
/// later one after it aborted, the ticket and the counter read in the insert's
/// transaction tell (`source::counted::still_reserved`).
pub(crate) struct Gapless {
    pub session: BsonDocument,
    pub ticket: u64,
}

impl ReservedId {
    /// `Ok` if a document of `scope`, inserted at `origin` in `session`, may take this id,
    /// as far as can be told without a round trip: the database and handle it was reserved
    /// through ([`ErrorKind::ReservedElsewhere`]), the scope it was reserved for
    /// ([`ErrorKind::ReservedScope`]), and for a gapless id a transaction of the session that
    /// reserved it ([`ErrorKind::ReservedTransaction`]).
    pub(crate) fn admits(
        &self,
        seq: &'static Sequence,
        origin: &Origin,
        scope: &Scope,
        session: &Session<'_>,
    ) -> Result<(), Error> {
        if let Some((reserved, insert)) = self.origin.differs(origin) {
            return Err(Error::new(
                seq,
                ErrorKind::ReservedElsewhere {
                    id: self.id,
                    reserved: reserved.into(),
                    insert: insert.into(),
                },
            ));
        }
        if self.scope != *scope {
            return Err(Error::new(
                seq,
                ErrorKind::ReservedScope {
                    id: self.id,
                    reserved: self.scope.to_string().into(),
                    document: scope.to_string().into(),
                },
            ));
        }
        let Some(gapless) = &self.gapless else {
            return Ok(());
        };
        let refused = |reason: &str| {
            Err(Error::new(
                seq,
                ErrorKind::ReservedTransaction {
                    id: self.id,
                    reason: reason.into(),
                },
            ))
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
