//! One document: `insert` and `resume_insert`. The id comes from the strategy's source
//! (one id from a counter, or the optimistic loop's candidates, retried while another
//! writer takes them), is filled in, and the document is written once per id.

use std::future::Future;
use std::sync::Arc;

use mongodb::bson::Document as BsonDocument;

use super::earlier::{left_behind, takes_a_new_id};
use crate::base::code;
use crate::base::companions::Companions;
use crate::base::error::Error;
use crate::base::fate::Fate;
use crate::base::fields::{carried, ensure_unset, fill, numbered_on_insert, unset};
use crate::base::future::BoxFuture;
use crate::base::id::IdField;
use crate::base::model::{IdValue, Model};
use crate::base::retry::Tries;
use crate::base::scope::{Key, Scope};
use crate::base::sequence::{Sequence, Strategy};
use crate::base::span::{self, Traced};
use crate::round_trip::gate;
use crate::round_trip::indexes;
use crate::round_trip::write;
use crate::source::counted;
use crate::source::optimistic::Progress;
use crate::source::others::{self, Wanted};
use crate::state::context::{Call, Context};
use crate::state::frontier::{InFlight, Maximum};
use crate::state::registry::Route;
use crate::state::turnstile;

/// `insert`: a new id for `doc`, whose id field is unset, and one write.
pub(crate) async fn one<T: Model>(
    doc: &mut T,
    route: Route<'_>,
    call: Call<'_>,
) -> Traced<Result<IdValue<T>, Error>> {
    // A reference to the constant, not a copy of it in the insert's state.
    let seq: &'static Sequence = &T::SEQUENCE;
    let mut cx = match gate::open(seq, route, call).await {
        Ok(cx) => cx,
        Err(error) => return Traced::from(Err(error)),
    };
    // Not held across the await below: the error it may hold is larger than the rest.
    let checked = numbered_on_insert::<T>("insert")
        .and_then(|()| ensure_unset(doc))
        .and_then(|()| others::ensure_unset(doc))
        .and_then(|()| code::ensure_unset(doc));
    let scope = match checked.and_then(|()| Scope::of(seq, doc)) {
        Ok(scope) => scope,
        Err(error) => return cx.finish(Err(error)),
    };
    let mut ids = Companions::fill(doc);
    cx.content_is_unique |= ids.made_content_unique();
    let result = fresh(ids.doc(), scope, &mut cx).await;
    span::codes(std::slice::from_ref(ids.doc()));
    drop(ids);
    cx.finish(result)
}

/// Inserts a document whose id field is unset under a new id (a first send).
pub(crate) async fn fresh<T: Model>(
    doc: &mut T,
    scope: Scope,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    // Before any id is taken: a value that would make a code ambiguous.
    code::check(doc)?;
    match cx.seq.strategy {
        // Boxed: the optimistic loop's state would otherwise make every counted insert's
        // as large as its own.
        Strategy::Optimistic { .. } => optimistic_one(doc, scope, cx).await,
        _ => counted_one(doc, scope, cx).await,
    }
}

/// One id from the counter of `scope`, filled in, and one write.
async fn counted_one<T: Model>(
    doc: &mut T,
    scope: Scope,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    let id = match T::OTHERS.is_empty() {
        true => counted::take_one(&scope, cx).await?,
        // Boxed: a document with several sequences costs a round trip per reservation.
        false => Box::pin(take_all(doc, &scope, cx)).await?,
    };
    let value = fill(doc, id)?;
    let key = Key { scope, id };
    let fate = write::insert_one(doc, &key, cx.first(), (), cx).await;
    conclude(doc, id, value, fate)
}

/// One id of the primary sequence, its reservation out at the same time as the other
/// sequences' (see [`crate::source::others`]); the others' ids filled in. The primary's id is held
/// as theirs are until all have come: a caller cancelled meanwhile gives them all back.
async fn take_all<T: Model>(
    doc: &mut T,
    scope: &Scope,
    cx: &mut Context<'_>,
) -> Result<i64, Error> {
    let wanted = Wanted::of(std::slice::from_ref(doc), &[0])?;
    let route = cx.route;
    let primary = [(scope.clone(), 1)];
    let (primary, reserved) = futures_util::join!(
        counted::take_groups(&primary, cx),
        others::reserve_outside(route, &wanted)
    );
    let primary = primary?.pop().expect("one group, one reservation")?;
    others::finish(std::slice::from_mut(doc), &wanted, reserved, cx).await?;
    Ok(primary.take()[0])
}

/// The other sequences' ids of `doc` that are unset, reserved and filled in before the
/// optimistic loop's first attempt, and kept across its retries.
async fn fill_others<T: Model>(doc: &mut T, cx: &mut Context<'_>) -> Result<(), Error> {
    let wanted = Wanted::of(std::slice::from_ref(doc), &[0])?;
    if wanted.is_empty() {
        return Ok(());
    }
    let reserved = others::reserve_outside(cx.route, &wanted).await;
    others::finish(std::slice::from_mut(doc), &wanted, reserved, cx).await
}

/// The optimistic branch of [`fresh`], boxed apart (a box made inside `fresh` still
/// leaves room for the unboxed state in `fresh`'s own).
fn optimistic_one<'a, T: Model>(
    doc: &'a mut T,
    scope: Scope,
    cx: &'a mut Context<'_>,
) -> BoxFuture<'a, Result<IdValue<T>, Error>> {
    Box::pin(async move {
        indexes::require(cx.route, cx.seq, indexes::OPTIMISTIC).await?;
        if !T::OTHERS.is_empty() {
            fill_others(doc, cx).await?;
        }
        let max = cx.collection::<BsonDocument>();
        let mut filling = Filling { doc, value: None };
        let (id, fate) = run(&scope, &max, &mut filling, cx).await?;
        let value = filling.value.expect("the loop writes at least once");
        conclude(filling.doc, id, value, fate)
    })
}

/// The answer for a single document written with `id`: a document known not to be
/// stored gets its id field unset; one of unknown fate keeps it.
fn conclude<T: Model>(
    doc: &mut T,
    id: i64,
    value: IdValue<T>,
    fate: Fate,
) -> Result<IdValue<T>, Error> {
    // A duplicate on another sequence's index is that sequence's number, read before
    // the ids are unset.
    let other = match &fate {
        Fate::Taken(rejection) | Fate::Refused(rejection) if rejection.is_duplicate_key() => {
            let index = rejection.index.as_deref();
            index.and_then(|index| others::on_index(doc, index))
        }
        _ => None,
    };
    if fate.unsets_the_id() {
        unset(doc);
    }
    match other {
        Some((seq, other_id)) => fate.conclude(seq, other_id, value),
        None => fate.conclude(&T::SEQUENCE, id, value),
    }
}

/// `resume_insert`: finishes an insert whose outcome was unknown.
pub(crate) async fn resume<T: Model>(
    doc: &mut T,
    route: Route<'_>,
    call: Call<'_>,
) -> Traced<Result<IdValue<T>, Error>> {
    let seq: &'static Sequence = &T::SEQUENCE;
    let mut cx = match gate::open(seq, route, call).await {
        Ok(cx) => cx,
        Err(error) => return Traced::from(Err(error)),
    };
    if let Err(error) = numbered_on_insert::<T>("resume_insert") {
        return cx.finish(Err(error));
    }
    if doc.sequence_id().is_unset()
        && let Err(error) = others::ensure_unset(doc).and_then(|()| code::ensure_unset(doc))
    {
        return cx.finish(Err(error));
    }
    let mut ids = Companions::fill(doc);
    let result = resume_one(ids.doc(), &mut cx).await;
    span::codes(std::slice::from_ref(ids.doc()));
    drop(ids);
    cx.finish(result)
}

/// [`resume`], in its context.
pub(crate) async fn resume_one<T: Model>(
    doc: &mut T,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    let (seq, route) = (cx.seq, cx.route);
    let (keys, values) = carried(std::slice::from_ref(doc), &[0])?;
    let (Some(key), Some(&value)) = (keys.into_iter().next(), values.first()) else {
        let scope = Scope::of(seq, doc)?;
        return fresh(doc, scope, cx).await;
    };
    // The code its first send wrote, from the same ids and fields.
    code::fill(doc)?;
    indexes::require(route, seq, indexes::RESUME).await?;
    // The write of a cancelled insert through this handle says itself what became of it.
    if let Some(fate) = left_behind(route, &key, doc).await {
        return match fate {
            // Another writer's document held the id: as the insert itself would have.
            Fate::Taken(_) if takes_a_new_id(seq) => {
                unset(doc);
                fresh(doc, key.scope, cx).await
            }
            fate => conclude(doc, key.id, value, fate),
        };
    }
    let again = cx.again();
    match write::insert_one(doc, &key, again, (), cx).await {
        // Only where the caller asserted that equal content is its own: a different
        // document holds the id (see `write::classify`).
        Fate::Taken(_) if takes_a_new_id(seq) => {
            unset(doc);
            fresh(doc, key.scope, cx).await
        }
        // The id stays, so that this document is not stored a second time by mistake.
        Fate::Taken(rejection) => Err(rejection.into_error(seq, key.id)),
        fate => conclude(doc, key.id, value, fate),
    }
}

/// One write of the loop: the document under a candidate's key.
pub(crate) trait Attempt: Send {
    /// Writes the document with the id of `key`; `hold` is dropped when the write ends. A
    /// document whose id was taken is left unset.
    fn write(
        &mut self,
        key: &Key,
        hold: Arc<InFlight>,
        cx: &mut Context<'_>,
    ) -> impl Future<Output = Result<Fate, Error>> + Send;
}

/// The caller's document, filled with each candidate in turn.
struct Filling<'d, T: Model> {
    doc: &'d mut T,
    /// The id value of the last candidate filled in.
    value: Option<IdValue<T>>,
}

impl<T: Model> Attempt for Filling<'_, T> {
    async fn write(
        &mut self,
        key: &Key,
        hold: Arc<InFlight>,
        cx: &mut Context<'_>,
    ) -> Result<Fate, Error> {
        self.value = Some(fill(self.doc, key.id)?);
        let fate = write::insert_one(&*self.doc, key, cx.first(), hold, cx).await;
        if matches!(fate, Fate::Taken(_)) {
            unset(self.doc);
        }
        Ok(fate)
    }
}

/// The loop for one document in `scope`, with candidates above the maximum `max` reads:
/// the id of the last write and its fate (never [`Fate::Taken`]), or
/// [`Error::RetriesExhausted`] once the call's budget is spent.
pub(crate) async fn run<M: Maximum, A: Attempt>(
    scope: &Scope,
    max: &M,
    attempt: &mut A,
    cx: &mut Context<'_>,
) -> Result<(i64, Fate), Error> {
    let seq = cx.seq;
    let mut progress = Progress::new(scope, cx);
    let mut tries = Tries::start(cx.budget);
    let mut last_id = 0;
    // Through a bare database, the tasks of this process take turns, one attempt at a
    // time (see `turnstile`).
    let bare = cx.route.registry.is_none() && !cx.session.in_transaction();
    while tries.next().await {
        let turn = match bare {
            true => turnstile::turn(seq, scope, tries.patience()).await,
            false => None,
        };
        let flight = progress.candidates(max, scope, 1, cx).await?;
        let key = Key {
            scope: scope.clone(),
            id: flight.ids[0],
        };
        tries.read(key.id);
        last_id = key.id;
        let fate = attempt.write(&key, Arc::clone(&flight), cx).await?;
        // The next task of this process reads after this write.
        drop(turn);
        match fate {
            Fate::Taken(_) => {
                progress.taken(&flight, &[key.id]);
                progress.tally().retried();
                tries.lost();
                tracing::debug!(
                    sequence = seq.name,
                    id = key.id,
                    attempt = tries.made(),
                    "optimistic: id taken by another writer; retrying"
                );
            }
            fate => {
                match fate {
                    // A refused id is free again: through a handle, the next insert
                    // takes it (no gap while the handle goes on inserting).
                    Fate::Refused(_) if cx.route.registry.is_some() => flight.give_back(key.id),
                    Fate::Refused(_) => {}
                    // Any other may be stored.
                    _ => flight.finish([key.id]),
                }
                return Ok((key.id, fate));
            }
        }
    }
    let error = tries.exhausted(seq, last_id);
    tracing::warn!(sequence = seq.name, %error, "optimistic: gave up");
    Err(error)
}

#[cfg(test)]
mod tests {
    //! The loop against a maximum that lags or errs, without a server: a client connects
    //! lazily, and nothing here reaches it.

    use std::collections::VecDeque;
    use std::sync::Mutex;

    use mongodb::ClientSession;
    use mongodb::bson::Bson;

    use super::*;
    use crate::base::fate::Rejection;
    use crate::base::once::{Warning, first_time};
    use crate::state::frontier::Ids;
    use std::time::Duration;

    use crate::base::retry::Budget;
    use crate::base::sequence::construct::optimistic;
    use crate::base::sequence::testing::on_id;
    use crate::base::server::DUPLICATE_KEY;
    use crate::base::session::Session;
    use crate::state::registry::Registry;

    const fn seq(name: &'static str) -> Sequence {
        on_id(name, name, optimistic(Some(16), None))
    }

    /// A maximum query that answers `answers` in turn, then the last one for ever, to an
    /// unfiltered read; a read above an id answers the largest id `stored` holds above
    /// it, as MongoDB would (a wrong sort, a lagging read: the unfiltered answers).
    #[derive(Clone)]
    struct Answers {
        unfiltered: Arc<Mutex<VecDeque<i64>>>,
        stored: i64,
        /// Every read, with its `above`.
        reads: Arc<Mutex<Vec<Option<i64>>>>,
    }

    impl Answers {
        /// `answers` to unfiltered reads; nothing stored above any id.
        fn new(answers: &[i64]) -> Self {
            Answers::storing(answers, 0)
        }

        /// `answers` to unfiltered reads; ids up to `stored` are stored.
        fn storing(answers: &[i64], stored: i64) -> Self {
            Answers {
                unfiltered: Arc::new(Mutex::new(answers.iter().copied().collect())),
                stored,
                reads: Arc::default(),
            }
        }
    }

    impl Maximum for Answers {
        async fn largest(
            &self,
            _: &'static Sequence,
            _: &Scope,
            ids: Ids,
            above: Option<i64>,
            _: Option<&mut ClientSession>,
        ) -> Result<(Option<Bson>, Ids), Error> {
            self.reads.lock().unwrap().push(above);
            if let Some(above) = above {
                let top = (self.stored > above).then_some(Bson::Int64(self.stored));
                return Ok((top, ids));
            }
            let mut answers = self.unfiltered.lock().unwrap();
            let answer = match answers.len() {
                1 => answers[0],
                _ => answers.pop_front().expect("at least one answer"),
            };
            Ok((Some(Bson::Int64(answer)), ids))
        }
    }

    /// Another writer holds every id up to `taken_through`; every id tried is recorded.
    struct Others {
        taken_through: i64,
        tried: Vec<i64>,
    }

    impl Attempt for Others {
        async fn write(
            &mut self,
            key: &Key,
            _: Arc<InFlight>,
            _: &mut Context<'_>,
        ) -> Result<Fate, Error> {
            self.tried.push(key.id);
            if key.id <= self.taken_through {
                return Ok(Fate::taken(Rejection {
                    code: Some(DUPLICATE_KEY),
                    ..Rejection::default()
                }));
            }
            Ok(Fate::Stored)
        }
    }

    async fn database() -> mongodb::Database {
        mongodb::Client::with_uri_str("mongodb://127.0.0.1:9")
            .await
            .unwrap()
            .database("app")
    }

    /// The context of a call of `seq` into `db`, through `registry`'s handle or bare: 16
    /// attempts within 10 s.
    fn context<'a>(
        seq: &'static Sequence,
        db: &'a mongodb::Database,
        registry: Option<&'a Registry>,
    ) -> Context<'a> {
        Context {
            seq,
            route: Route {
                db,
                registry,
                collections: None,
            },
            session: Session::none(),
            budget: Budget {
                max_attempts: Some(16),
                time: Duration::from_secs(10),
            },
            content_is_unique: false,
            reservations: 0,
            early_turn: None,
        }
    }

    /// Runs the loop once for `seq`, through a handle or a bare database, against `max`
    /// and another writer holding every id up to `taken_through`.
    async fn run_loop(
        seq: &'static Sequence,
        handle: bool,
        max: &Answers,
        taken_through: i64,
    ) -> (Result<(i64, Fate), Error>, Vec<i64>) {
        let db = database().await;
        let registry = Registry::new();
        let mut cx = context(seq, &db, handle.then_some(&registry));
        let mut others = Others {
            taken_through,
            tried: Vec::new(),
        };
        let outcome = run(&Scope::default(), max, &mut others, &mut cx).await;
        (outcome, others.tried)
    }

    /// The maximum keeps answering 72 while another writer holds 73..=80 (a server whose
    /// sort is wrong, a lagging read): each retry goes above the ids seen taken, and the
    /// ninth reaches 81.
    #[tokio::test]
    async fn a_maximum_stuck_below_taken_ids_never_makes_the_loop_repeat_an_id() {
        const SEQ: Sequence = seq("stuck");
        for handle in [false, true] {
            let (outcome, tried) = run_loop(&SEQ, handle, &Answers::new(&[72]), 80).await;
            let (id, fate) = outcome.unwrap();
            assert_eq!(id, 81, "handle: {handle}");
            assert!(matches!(fate, Fate::Stored));
            assert_eq!(tried, (73..=81).collect::<Vec<_>>(), "handle: {handle}");
        }
    }

    /// With more taken ids than attempts, the loop gives up, having tried each id once.
    /// (The clock is tokio's fake one: the loop's waits between attempts take no time.)
    #[tokio::test(start_paused = true)]
    async fn the_loop_gives_up_after_its_attempts_with_every_id_tried_once() {
        const SEQ: Sequence = seq("exhausted");
        let (outcome, tried) = run_loop(&SEQ, false, &Answers::new(&[72]), 1_000).await;
        match outcome {
            Err(Error::RetriesExhausted {
                attempts,
                last_id,
                time_budget,
                ..
            }) => assert_eq!((attempts, last_id, time_budget), (16, 88, None)),
            other => panic!("expected RetriesExhausted, got {other:?}"),
        }
        assert_eq!(tried, (73..=88).collect::<Vec<_>>());
    }

    /// After a taken id, the maximum is read above it: a server whose unfiltered sort
    /// answers 9 (nx-27017 sorts `_id` as text) while ids up to 73 are stored costs one
    /// lost attempt, not one per id from 10 to 73.
    #[tokio::test]
    async fn a_read_after_a_taken_id_asks_above_it_and_jumps_to_the_stored_maximum() {
        const SEQ: Sequence = seq("above");
        for handle in [false, true] {
            let max = Answers::storing(&[9], 73);
            let (outcome, tried) = run_loop(&SEQ, handle, &max, 73).await;
            assert_eq!(outcome.unwrap().0, 74, "handle: {handle}");
            assert_eq!(tried, [10, 74], "handle: {handle}");
            assert_eq!(*max.reads.lock().unwrap(), [None, Some(10)]);
        }
    }

    /// A maximum that goes backwards between two unfiltered reads of one frontier is
    /// warned of (once per process and sequence); one that only rises is not.
    #[tokio::test]
    async fn a_maximum_going_backwards_is_warned_of_once() {
        const BACKWARDS: Sequence = seq("backwards");
        const RISING: Sequence = seq("rising");
        let db = database().await;
        for (seq, answers, warned) in [(&BACKWARDS, [80, 72], true), (&RISING, [72, 80], false)] {
            // Through a handle: both calls read through one frontier.
            let registry = Registry::new();
            let max = Answers::new(&answers);
            for _ in 0..2 {
                let mut cx = context(seq, &db, Some(&registry));
                let mut others = Others {
                    taken_through: 0,
                    tried: Vec::new(),
                };
                run(&Scope::default(), &max, &mut others, &mut cx)
                    .await
                    .unwrap();
            }
            assert_eq!(
                !first_time(Warning::MaximumBackwards, seq),
                warned,
                "{}",
                seq.name
            );
        }
    }

    /// What `insert_many` relies on: the candidates of a round, some of them taken, are
    /// followed by candidates above every one taken, however the maximum lags.
    #[tokio::test]
    async fn a_rounds_taken_candidates_are_never_handed_out_again() {
        const SEQ: Sequence = seq("rounds");
        let db = database().await;
        for handle in [false, true] {
            let registry = Registry::new();
            let mut cx = context(&SEQ, &db, handle.then_some(&registry));
            let scope = Scope::default();
            let max = Answers::new(&[72]);
            let mut progress = Progress::new(&scope, &cx);
            let first = progress.candidates(&max, &scope, 3, &mut cx).await.unwrap();
            assert_eq!(first.ids, [73, 74, 75]);
            // 73 and 75 were taken by another writer; 74 was stored.
            first.finish([74]);
            progress.taken(&first, &[73, 75]);
            drop(first);
            let second = progress.candidates(&max, &scope, 2, &mut cx).await.unwrap();
            assert_eq!(second.ids, [76, 77], "handle: {handle}");
        }
    }
}
