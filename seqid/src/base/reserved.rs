//! An id reserved for a document built later (`T::reserve_ids`), as the insert that
//! stores it reads it: the id, the scope whose counter handed it out, and for a gapless
//! sequence the caller's transaction it was taken in, which it lives and dies with. The
//! public token, [`Reserved`](crate::Reserved), holds one and nothing else.

use crate::base::error::Error;
use crate::base::scope::Scope;
use crate::base::sequence::Sequence;
use crate::base::session::{Session, Transaction};

/// One id reserved, and what it was reserved for.
pub(crate) struct Held {
    pub id: i64,
    pub scope: Scope,
    /// The caller's transaction a gapless id was taken in (boxed: rare, and large).
    pub transaction: Option<Box<Transaction>>,
}

impl Held {
    /// `Ok` if a document of `scope`, inserted in `session`, may take this id: the scope it
    /// was reserved for ([`Error::ReservedScope`]), and for a gapless id the transaction it
    /// was reserved in ([`Error::ReservedTransaction`]).
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
        match &self.transaction {
            Some(taken_in) if session.transaction().as_ref() != Some(&**taken_in) => {
                Err(Error::ReservedTransaction {
                    sequence: seq,
                    id: self.id,
                    in_transaction: session.in_transaction(),
                })
            }
            _ => Ok(()),
        }
    }
}
