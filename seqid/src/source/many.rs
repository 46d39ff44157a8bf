//! The id source of `insert_many`'s rounds ([`crate::insert::many`]), per strategy: one
//! reservation per scope for the documents still waiting, and what the ids another
//! writer holds cost each strategy when the round's fates come back.

use std::collections::HashMap;
use std::sync::Arc;

use mongodb::Collection;
use mongodb::bson::Document as BsonDocument;

use crate::base::error::Error;
use crate::base::fate::Rejection;
use crate::base::retry::Tries;
use crate::base::server::{DUPLICATE_KEY, identity_index};
use crate::call::context::Context;
use crate::fields::ids::unset;
use crate::fields::scope::Scope;
use crate::optimistic::frontier::InFlight;
use crate::round_trip::indexes;
use crate::schema::model::{IdValue, Model};
use crate::schema::sequence::Strategy;
use crate::source::batch::{Batch, Taken};
use crate::source::counted;
use crate::source::optimistic::Progress;
use crate::state::allocator::Handed;

/// Where a round's ids come from: the strategy's share of `insert_many`, its
/// reservations and what it does with ids another writer holds.
pub(crate) enum Source {
    /// `counters`, `block`, `gapless`: one round; a counter's id held by another
    /// document was written by other means (see `sync_counter`): a failure, not a retry.
    Counted,
    /// The optimistic loop: rounds until no document waits or the budget is spent; a
    /// taken candidate is never tried again, its document waits for the next round.
    Optimistic {
        max: Collection<BsonDocument>,
        /// Kept for the whole call: what each round learned holds for the next.
        progress: HashMap<Scope, Progress>,
    },
}

/// The ids of one round, by group: each group's ids or why it has none, and the
/// candidates kept in flight until the round's writes end (optimistic).
pub(crate) struct Reserved {
    /// ReservedId until filled in: a caller cancelled while the other sequences' reservations
    /// are still out gives them back.
    pub ids: Vec<Result<Handed, Error>>,
    pub flights: Vec<Arc<InFlight>>,
}

impl Source {
    /// The source of `cx`'s sequence; the optimistic one once the unique index it relies
    /// on is found.
    pub(crate) async fn of(cx: &Context<'_>) -> Result<Source, Error> {
        let seq = cx.seq;
        match seq.strategy {
            Strategy::Optimistic { .. } => {
                indexes::require(cx.route, seq, indexes::OPTIMISTIC).await?;
                let (max, progress) = (cx.collection(), HashMap::new());
                Ok(Source::Optimistic { max, progress })
            }
            _ => Ok(Source::Counted),
        }
    }

    /// Ids for every group of waiting documents. `Err` stops the call: no id could be
    /// had for any document (for the counters, the error itself when every scope
    /// failed, as for an unscoped sequence).
    pub(crate) async fn reserve(
        &mut self,
        groups: &[(Scope, Vec<usize>)],
        cx: &mut Context<'_>,
    ) -> Result<Reserved, Error> {
        match self {
            Source::Counted => {
                let mut ids = counted::take_groups(groups, cx).await?;
                if ids.iter().all(Result::is_err) {
                    return Err(ids.swap_remove(0).expect_err("every reservation failed"));
                }
                Ok(Reserved {
                    ids,
                    flights: Vec::new(),
                })
            }
            Source::Optimistic { max, progress } => {
                let mut reserved = Reserved {
                    ids: Vec::with_capacity(groups.len()),
                    flights: Vec::with_capacity(groups.len()),
                };
                for (scope, positions) in groups {
                    let progress = progress
                        .entry(scope.clone())
                        .or_insert_with(|| Progress::new(scope, cx));
                    let flight = progress.candidates(max, scope, positions.len(), cx).await?;
                    reserved.ids.push(Ok(Handed::kept(flight.ids.clone())));
                    reserved.flights.push(flight);
                }
                Ok(reserved)
            }
        }
    }

    /// What the source does with the round's fates: `taken` are the documents whose id
    /// another document holds (their ids untouched in `docs`).
    pub(crate) fn settle<T: Model>(
        &mut self,
        groups: &[(Scope, Vec<usize>)],
        flights: Vec<Arc<InFlight>>,
        taken: &[Taken],
        batch: &mut Batch<IdValue<T>>,
        docs: &mut [T],
    ) {
        for taken in taken {
            unset(&mut docs[taken.position]);
        }
        match self {
            Source::Counted => {
                for taken in taken {
                    batch.fail(taken.position, taken.rejection.clone());
                }
            }
            Source::Optimistic { progress, .. } => {
                let retried: std::collections::HashSet<usize> =
                    taken.iter().map(|taken| taken.position).collect();
                // Taken ids are never tried again by this call; every other candidate
                // not refused is stored or maybe stored: above it next time.
                for ((scope, positions), flight) in groups.iter().zip(flights) {
                    let progress = progress.get_mut(scope).expect("reserved above");
                    let (taken, others): (Vec<_>, Vec<_>) = positions
                        .iter()
                        .zip(&flight.ids)
                        .partition(|(p, _)| retried.contains(*p));
                    let taken: Vec<i64> = taken.into_iter().map(|(_, &id)| id).collect();
                    let used = others.into_iter().filter(|(p, _)| !batch.failed(**p));
                    flight.finish(used.map(|(_, &id)| id));
                    progress.taken(&flight, &taken);
                    let retries = &progress.tally().retries;
                    retries.fetch_add(taken.len() as u64, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
    }

    /// Fails the documents still waiting once the budget is spent (optimistic: every
    /// candidate they were given was taken).
    pub(crate) fn give_up<V: Copy>(&self, batch: &mut Batch<V>, tries: &Tries, cx: &Context<'_>) {
        if let Source::Optimistic { .. } = self {
            let (seq, made, ms) = (cx.seq, tries.made(), tries.elapsed().as_millis());
            batch.fail_waiting(&Rejection {
                code: Some(DUPLICATE_KEY),
                message: format!(
                    "every {} tried in {made} attempts over {ms} ms was taken by another writer",
                    seq.field
                ),
                index: Some(identity_index(seq)),
                ..Rejection::default()
            });
        }
    }
}
