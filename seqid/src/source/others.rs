//! A document's other sequences ([`Model::OTHERS`]): the ids of every sequence of a
//! document but its primary one ([`Model::SEQUENCE`], which decides how the document is
//! written and retried).
//!
//! They are reserved once per call, one reservation per sequence and scope, out at the same
//! time as the primary's (and as one another), and held until every one has come: a caller
//! cancelled while one is still out gives the others back to their handle's allocators.
//! They are then filled in, all or none, and the document is written once. Kept across the
//! optimistic loop's retries (the primary's candidate was taken, not these), and unset with
//! the primary's id when the document is known not to be stored
//! ([`crate::fields::companions`]). A gapless one is reserved in the caller's transaction, after
//! the others: the session serves one command at a time.

use crate::base::error::{Error, ErrorKind};
use crate::base::session::Session;
use crate::call::context::Context;
use crate::call::registry::Route;
use crate::counter::Counter;
use crate::counter::gapless;
use crate::fields::ids::origin;
use crate::fields::scope::{Scope, grouped};
use crate::schema::model::Model;
use crate::schema::sequence::{Sequence, Strategy};
use crate::source::counted;
use crate::state::allocator::Handed;

/// The documents waiting for an id of each other sequence, grouped by that sequence's
/// scope: `(index in OTHERS, sequence, scope, positions)`, one reservation each.
pub(crate) struct Wanted {
    groups: Vec<(usize, &'static Sequence, Scope, Vec<usize>)>,
}

impl Wanted {
    /// What `docs[positions]` need: an id of every other sequence whose field is unset.
    /// Every scope is read here, before anything is reserved.
    pub(crate) fn of<T: Model>(docs: &[T], positions: &[usize]) -> Result<Wanted, Error> {
        let mut groups = Vec::new();
        for (index, seq) in T::OTHERS.iter().enumerate() {
            let unset = positions
                .iter()
                .filter(|&&p| docs[p].other_id(index).is_some_and(|f| f.value().is_none()));
            let scoped = unset
                .map(|&p| Ok((Scope::of(seq, &docs[p])?, p)))
                .collect::<Result<Vec<_>, Error>>()?;
            for (scope, positions) in grouped(scoped) {
                groups.push((index, seq, scope, positions));
            }
        }
        Ok(Wanted { groups })
    }

    /// Whether nothing is wanted (a model with one sequence, or every id kept).
    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}

/// The reservations of a [`Wanted`], one per group, held until filled in.
pub(crate) struct Reserved {
    ids: Vec<Option<Handed>>,
    /// Reservation round trips waited for, for the insert's span.
    waited: u32,
}

/// Reserves every group of `wanted` that is reserved outside the caller's transaction
/// (all but the gapless ones), all at once.
pub(crate) async fn reserve_outside(route: Route<'_>, wanted: &Wanted) -> Result<Reserved, Error> {
    let takes = wanted
        .groups
        .iter()
        .map(|(_, seq, scope, positions)| async move {
            match seq.strategy {
                Strategy::Gapless => Ok(None),
                _ => counted::take_outside(route, Counter { seq, scope }, positions.len() as u64)
                    .await
                    .map(Some),
            }
        });
    let mut reserved = Reserved {
        ids: Vec::with_capacity(wanted.groups.len()),
        waited: 0,
    };
    for taken in futures_util::future::join_all(takes).await {
        // On an error, what was reserved is given back as `reserved` is dropped.
        let taken = taken?;
        reserved.waited += u32::from(taken.as_ref().is_some_and(|allocated| allocated.waited));
        reserved.ids.push(taken.map(|allocated| allocated.ids));
    }
    Ok(reserved)
}

/// The rest of a reservation begun with [`reserve_outside`] (`outside`, its outcome): the
/// gapless groups, in the caller's transaction, then every id filled into `docs`, all or
/// none; the round trips counted for the insert's span. On an error, the ids not filled
/// go back.
pub(crate) async fn finish<T: Model>(
    docs: &mut [T],
    wanted: &Wanted,
    outside: Result<Reserved, Error>,
    cx: &mut Context<'_>,
) -> Result<(), Error> {
    let mut reserved = outside?;
    reserve_inside(cx.route, wanted, &mut reserved, &mut cx.session).await?;
    cx.reservations += reserved.waited;
    fill(docs, wanted, reserved)
}

/// Reserves the gapless groups of `wanted` in the caller's transaction, one after the
/// other, into `reserved`.
async fn reserve_inside(
    route: Route<'_>,
    wanted: &Wanted,
    reserved: &mut Reserved,
    session: &mut Session<'_>,
) -> Result<(), Error> {
    for ((_, seq, scope, positions), ids) in wanted.groups.iter().zip(&mut reserved.ids) {
        if ids.is_none() {
            let (counter, count) = (Counter { seq, scope }, positions.len() as u64);
            let tally = &route.counter(seq, scope).tally;
            let taken = gapless::take(route.db, counter, count, tally, session, None).await?;
            *ids = Some(Handed::kept(taken));
            reserved.waited += 1;
        }
    }
    Ok(())
}

/// Fills the reserved ids into `docs`, all or none: a field whose type cannot hold its id
/// is [`ErrorKind::Overflow`] naming its sequence, and the fields filled before it are unset
/// again. The ids are the documents' from here on, used or lost: none goes back.
fn fill<T: Model>(docs: &mut [T], wanted: &Wanted, reserved: Reserved) -> Result<(), Error> {
    let mut filled: Vec<(usize, usize)> = Vec::new();
    let result = fill_each(docs, wanted, reserved, &mut filled);
    if result.is_err() {
        for (position, index) in filled {
            if let Some(field) = docs[position].other_id_mut(index) {
                field.unset();
            }
        }
    }
    result
}

fn fill_each<T: Model>(
    docs: &mut [T],
    wanted: &Wanted,
    reserved: Reserved,
    filled: &mut Vec<(usize, usize)>,
) -> Result<(), Error> {
    for ((index, seq, _, positions), ids) in wanted.groups.iter().zip(reserved.ids) {
        let index = *index;
        let ids = ids.map(Handed::take).unwrap_or_default();
        for (&position, id) in positions.iter().zip(ids) {
            let Some(field) = docs[position].other_id_mut(index) else {
                continue;
            };
            if !field.fill(id) {
                return Err(Error::new(
                    seq,
                    ErrorKind::Overflow {
                        value: id.into(),
                        target: field.field_type(),
                        origin: origin(seq).into(),
                    },
                ));
            }
            filled.push((position, index));
            if field.value().is_none() {
                return Err(Error::new(
                    seq,
                    ErrorKind::ZeroId {
                        target: field.type_name(),
                        origin: origin(seq).into(),
                    },
                ));
            }
        }
    }
    Ok(())
}

/// The other sequence of `T` whose unique index is `index` (as MongoDB names it), and
/// the id `doc` carries for it: a duplicate key there is that sequence's number, not the
/// primary's.
pub(crate) fn on_index<T: Model>(doc: &T, index: &str) -> Option<(&'static Sequence, i64)> {
    T::OTHERS.iter().enumerate().find_map(|(position, seq)| {
        if crate::base::server::identity_index(seq) != index {
            return None;
        }
        let value = doc.other_id(position)?.value()?;
        Some((seq, i64::try_from(value).ok()?))
    })
}

/// One id of the primary sequence for `doc` (in `scope`), its reservation out at the same
/// time as the other sequences'; the others' ids filled in: an insert's, and a draft's
/// whose sequences are all numbered later (`number_draft`). The primary's id is held as
/// theirs are until all have come: a caller cancelled meanwhile gives them all back.
pub(crate) async fn take_with_primary<T: Model>(
    doc: &mut T,
    scope: &Scope,
    cx: &mut Context<'_>,
) -> Result<i64, Error> {
    let wanted = Wanted::of(std::slice::from_ref(doc), &[0])?;
    let route = cx.route;
    // The document, at position 0 of its slice of one.
    let primary = [(scope.clone(), vec![0])];
    let (primary, reserved) = futures_util::join!(
        counted::take_groups(&primary, cx),
        reserve_outside(route, &wanted)
    );
    let primary = primary?.pop().expect("one group, one reservation")?;
    finish(std::slice::from_mut(doc), &wanted, reserved, cx).await?;
    Ok(primary.take()[0])
}
