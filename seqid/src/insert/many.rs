//! Many documents: `insert_many` and `resume_insert_many`.
//!
//! **The path of one `insert_many`.** [`many`] makes the call's context, checks that every
//! id field is unset and reads every document's scope (nothing is reserved or written
//! while one is wrong), and starts a [`Batch`], the pure bookkeeping of where each
//! document stands. Then, in rounds, down once and back up once:
//!
//! 1. **reserve**: the documents still waiting, grouped by scope, get their ids from the
//!    strategy's [`Source`]: one reservation per scope, all scopes at once
//!    ([`counted::take_groups`](crate::source::counted::take_groups), or a
//!    [`Progress`](crate::source::optimistic::Progress) per scope);
//! 2. **fill**: the ids go into the documents' id fields, all or none
//!    ([`fill_positions`](crate::fields::ids::fill_positions));
//! 3. **write**: the round's documents go in one `insert_many`
//!    ([`write::insert_many`](crate::round_trip::write::insert_many), which sends commands of a size the
//!    driver sends whole), and a fate comes back for each;
//! 4. **record**: the batch records the fates ([`Batch::record`]); a document known not to
//!    be stored gets its id field unset;
//! 5. **settle**: the source learns what became of its ids: a counter's id held by another
//!    document is a failure; an optimistic candidate another writer took is never tried
//!    again, and its document waits for the next round.
//!
//! The counter strategies make one round; the optimistic one makes rounds until no
//! document waits or its budget is spent (waiting between rounds as
//! [`Tries`](crate::base::retry::Tries) learns). The batch then concludes: every id, or
//! [`ErrorKind::Bulk`](crate::error::ErrorKind::Bulk) saying what became of each document. `resume_insert_many` first sends
//! the documents that carry an id again (or learns their fate from the handle), then
//! fills the rest as above.

use std::sync::Arc;

use crate::base::error::Error;
use crate::base::fate::{Fate, Rejection};
use crate::base::retry::Tries;
use crate::call::context::Context;
use crate::call::pending::left_behind;
use crate::call::span::{self};
use crate::fields::code;
use crate::fields::companions::CompanionsOfMany;
use crate::fields::ids::{
    carried, ensure_companions_unset, ensure_unset, fill_positions, numbered_on_insert, unset,
};
use crate::fields::scope::{Key, Scope, grouped};
use crate::optimistic::frontier::InFlight;
use crate::round_trip::indexes;
use crate::round_trip::write;
use crate::schema::id::IdField;
use crate::schema::model::{IdValue, Model};
use crate::source;
use crate::source::batch::{Batch, Outgoing, Taken};
use crate::source::many::{Reserved, Source};
use crate::source::others::{self, Wanted};
use crate::state::allocator::Handed;

/// `insert_many`: new ids for `docs`, whose id fields are all unset.
pub(crate) async fn many<T: Model>(
    docs: &mut [T],
    cx: &mut Context<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    // Every id checked before the guard: an id the caller set never reaches it. A gapless
    // sequence's ids are taken in the caller's transaction only: a batch is refused
    // without one whatever it holds, an empty one too, as one document is.
    numbered_on_insert::<T>("insert_many")?;
    docs.iter().try_for_each(|doc| ensure_unset(doc))?;
    source::require_transaction::<T>(cx)?;
    let mut ids = CompanionsOfMany::fill(docs);
    cx.content_is_unique |= ids.made_content_unique();
    let result = many_fresh(ids.docs(), cx).await;
    span::codes(ids.docs());
    result
}

/// [`many`], in its context.
async fn many_fresh<T: Model>(
    docs: &mut [T],
    cx: &mut Context<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    // Before any id is taken: a value that would make a code ambiguous.
    docs.iter().try_for_each(code::check)?;
    let scopes = scopes(docs, cx)?;
    let batch = Batch::new(docs.len());
    fill_waiting(docs, &scopes, batch, cx).await
}

/// The scope of every document, read before anything is reserved or written.
fn scopes<T: Model>(docs: &[T], cx: &Context<'_>) -> Result<Vec<Scope>, Error> {
    let scopes = docs.iter().map(|doc| Scope::of(cx.seq, doc));
    let scopes = scopes.collect::<Result<Vec<_>, _>>()?;
    span::scopes(cx.seq, &scopes);
    Ok(scopes)
}

/// `resume_insert_many`: finishes an `insert_many` that did not store every document.
pub(crate) async fn resume_many<T: Model>(
    docs: &mut [T],
    cx: &mut Context<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    numbered_on_insert::<T>("resume_insert_many")?;
    // A document without its sequence id is inserted afresh: its other ids must be unset,
    // as for `insert_many`.
    docs.iter()
        .filter(|doc| doc.sequence_id().is_unset())
        .try_for_each(ensure_companions_unset)?;
    let mut ids = CompanionsOfMany::fill(docs);
    let result = many_again(ids.docs(), cx).await;
    span::codes(ids.docs());
    result
}

/// [`resume_many`], in its context.
pub(crate) async fn many_again<T: Model>(
    docs: &mut [T],
    cx: &mut Context<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let (seq, route) = (cx.seq, cx.route);
    docs.iter().try_for_each(code::check)?;
    let scopes = scopes(docs, cx)?;
    let carrying: Vec<usize> = (0..docs.len())
        .filter(|&p| !docs[p].sequence_id().is_unset())
        .collect();
    let (keys, values) = carried(docs, &carrying)?;
    // The codes their first send wrote, from the same ids and fields.
    for &position in &carrying {
        code::fill(&mut docs[position])?;
    }
    let mut batch = Batch::new(docs.len());
    if !carrying.is_empty() {
        indexes::require(route, seq, indexes::RESUME).await?;
        // The writes of a cancelled insert through this handle say themselves what became
        // of them; the other documents are sent again.
        let mut again = Outgoing::default();
        for ((&position, key), &value) in carrying.iter().zip(&keys).zip(&values) {
            batch.sent(position, key.id);
            match left_behind(route, key, &docs[position]).await {
                Some(Fate::Stored) => batch.stored(position, value),
                // Another writer's document held the id: a new one, as the insert itself
                // would have done.
                Some(Fate::Taken(_)) if source::retakes_a_taken_id(seq) => {
                    unset(&mut docs[position])
                }
                Some(Fate::Taken(rejection) | Fate::Refused(rejection)) => {
                    unset(&mut docs[position]);
                    batch.fail(position, *rejection);
                }
                Some(Fate::Unknown(_)) | None => again.push(position, key.clone(), value),
            }
        }
        let send = cx.again();
        let taken = write_round(docs, &mut batch, &again, send, Vec::new(), cx).await;
        // Replaced below, or of unknown fate with its id kept.
        for taken in taken {
            match source::retakes_a_taken_id(seq) {
                true => unset(&mut docs[taken.position]),
                false => batch.unknown(taken.position),
            }
        }
    }
    fill_waiting(docs, &scopes, batch, cx).await
}

/// Gives every document still waiting in `batch` an id and writes it, in rounds (see the
/// module's docs).
async fn fill_waiting<T: Model>(
    docs: &mut [T],
    scopes: &[Scope],
    mut batch: Batch<IdValue<T>>,
    cx: &mut Context<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let seq = cx.seq;
    if batch.waiting().is_empty() {
        return batch.conclude(seq);
    }
    match rounds(docs, scopes, &mut batch, cx).await {
        Ok(()) => batch.conclude(seq),
        Err(error) => batch.abandon(seq, error),
    }
}

/// The rounds of [`fill_waiting`], until no document waits or the budget is spent; `Err`
/// abandons the batch.
async fn rounds<T: Model>(
    docs: &mut [T],
    scopes: &[Scope],
    batch: &mut Batch<IdValue<T>>,
    cx: &mut Context<'_>,
) -> Result<(), Error> {
    let mut source = Source::of(cx).await?;
    let mut tries = Tries::start(cx.budget);
    while tries.next().await {
        let waiting = batch.waiting();
        let groups = grouped(waiting.iter().map(|&p| (scopes[p].clone(), p)));
        // Down: reserve (the other sequences' ids too, in the first round: they are kept
        // across the rounds), fill, write.
        let wanted = Wanted::of(docs, &waiting)?;
        let route = cx.route;
        let (reserved, other_ids) = futures_util::join!(
            source.reserve(&groups, cx),
            others::reserve_outside(route, &wanted)
        );
        let Reserved { ids, flights } = reserved?;
        if !wanted.is_empty() {
            others::finish(docs, &wanted, other_ids, cx).await?;
        }
        let mut positions = Vec::with_capacity(waiting.len());
        let mut keys = Vec::with_capacity(waiting.len());
        for ((scope, group), ids) in groups.iter().zip(ids) {
            match ids.map(Handed::take) {
                Ok(ids) => {
                    for (&position, &id) in group.iter().zip(&ids) {
                        positions.push(position);
                        let scope = scope.clone();
                        keys.push(Key { scope, id });
                    }
                }
                // No id for this scope: its documents fail, the others go on.
                Err(error) => {
                    let rejection = Rejection::held_back(error.to_string());
                    for &position in group {
                        batch.fail(position, rejection.clone());
                    }
                }
            }
        }
        if let Some(first) = keys.first() {
            tries.read(first.id);
        }
        let values = fill_positions(docs, &positions, &keys)?;
        let outgoing = Outgoing {
            positions,
            keys,
            values,
        };
        let first = cx.first();
        let taken = write_round(docs, batch, &outgoing, first, flights.clone(), cx).await;
        // Up: the source learns what became of its ids.
        source.settle(&groups, flights, &taken, batch, docs);
        if batch.waiting().is_empty() {
            break;
        }
        tries.lost();
    }
    source.give_up(batch, &tries, cx);
    Ok(())
}

/// Writes the documents of `outgoing` with one `insert_many`, sent as `send` says, and
/// records their fates in `batch`: a document known not to be stored gets its id field
/// unset. Documents whose id another document holds are returned, their ids untouched,
/// for the source to settle. `flights` are released when the writes end.
async fn write_round<T: Model>(
    docs: &mut [T],
    batch: &mut Batch<IdValue<T>>,
    outgoing: &Outgoing<IdValue<T>>,
    send: crate::base::fate::Sending,
    flights: Vec<Arc<InFlight>>,
    cx: &mut Context<'_>,
) -> Vec<Taken> {
    let sent: Vec<&T> = outgoing.positions.iter().map(|&p| &docs[p]).collect();
    let fates = write::insert_many(&sent, &outgoing.keys, send, flights, cx).await;
    let taken = batch.record(outgoing, fates, cx.session.in_transaction());
    for &position in &outgoing.positions {
        if batch.failed(position) {
            unset(&mut docs[position]);
        }
    }
    taken
}
