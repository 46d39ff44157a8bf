//! The id sources, one per strategy: they hand out ids per scope and take back what became
//! of them (stored, refused, a race lost, an answer lost). The insert orchestration
//! ([`crate::insert`]) calls them; they call the round trips below.
//!
//! What a strategy's id costs when its document is not stored is the source's to say, and
//! the orchestration asks it here, whatever the strategy: a race lost ([`race_lost`]), an
//! id a different document holds when a document is sent again ([`retakes_a_taken_id`]),
//! and the transaction a gapless id needs ([`require_transaction`]). The optimistic loop
//! and its refusals are [`optimistic`]'s; a counter's, [`counted`]'s; what ids another
//! writer holds cost `insert_many`'s rounds, [`many`]'s.

pub(crate) mod batch;
pub(crate) mod counted;
pub(crate) mod many;
pub(crate) mod optimistic;
pub(crate) mod others;

use crate::base::error::{Error, ErrorKind};
use crate::call::context::Context;
use crate::fields::scope::Scope;
use crate::schema::model::Model;
use crate::schema::sequence::{Sequence, Strategy};

/// A race lost: another caller stored the key, or numbered the draft, first, and the id
/// `id` of `scope` this call took is not stored. Counted in
/// [`Stats::races_lost`](crate::Stats::races_lost), and given back where the strategy can
/// when `unwritten` (this call's write is known to have stored nothing under it): the
/// block strategy's to the handle's live block. A counter's id is a gap; an optimistic
/// candidate never stored is read again as free; a gapless id goes with the caller's
/// aborted transaction.
pub(crate) fn race_lost(cx: &Context<'_>, scope: &Scope, id: i64, unwritten: bool) {
    match cx.seq.strategy {
        Strategy::Optimistic { .. } => optimistic::race_lost(cx, scope, id),
        _ => counted::race_lost(cx, scope, id, unwritten),
    }
}

/// Whether a document sent again under its id, which a different document holds, takes a
/// new id: with the optimistic strategy another writer took the id after this insert was
/// lost. A counter's id is handed out once, so the document there is this one, changed
/// since it landed, or one written by other means: its fate stays unknown.
pub(crate) fn retakes_a_taken_id(seq: &Sequence) -> bool {
    matches!(seq.strategy, Strategy::Optimistic { .. })
}

/// A gapless sequence takes its ids in the caller's transaction only: a call of a type
/// with one (primary or other) is refused without it, before anything is read, so that it
/// never answers one way with a transaction and another without.
pub(crate) fn require_transaction<T: Model>(cx: &mut Context<'_>) -> Result<(), Error> {
    if cx.session.in_transaction() {
        return Ok(());
    }
    let mut sequences = std::iter::once(&T::SEQUENCE).chain(T::OTHERS);
    match sequences.find(|seq| seq.strategy == Strategy::Gapless) {
        Some(seq) => Err(Error::new(
            seq,
            ErrorKind::TransactionRequired {
                has_session: cx.session.join().is_some(),
            },
        )),
        None => Ok(()),
    }
}
