//! The optimistic strategy as an id source: candidates one above the largest numeric
//! value of the sequence's field (in the document's scope), from the scope's
//! [`Frontier`]; a candidate another writer took (a duplicate key on the field's unique
//! index) is taken back and never handed out again by the call. No counters collection.
//!
//! The loop of one document ([`run`]) lives here too: a candidate, one write of the
//! document under it (the orchestration's [`Attempt`], which knows the document), and
//! again while another writer takes the candidates, within the call's budget; through a
//! bare database the process's tasks take turns, one attempt at a time. Within one call,
//! on every path, a [`Progress`] keeps the loop from ever trying again an id it saw taken,
//! whatever the maximum answers.

use std::future::Future;
use std::sync::Arc;

use crate::base::error::Error;
use crate::base::fate::Fate;
use crate::base::retry::Tries;
use crate::call::context::Context;
use crate::fields::scope::{Key, Scope};
use crate::optimistic::frontier::{Frontier, InFlight, Maximum, MaximumRead};
use crate::state::allocator::Tally;
use crate::state::turns;

/// The loop of one call in one scope: the frontier its candidates come from, kept for
/// the whole call (so that a frontier made for the call keeps what each attempt learned),
/// and the largest id the call saw taken by another writer, which it never tries again.
/// Every retry is then above every id the call saw taken, however the maximum it reads
/// lags or errs.
pub(crate) struct Progress {
    frontier: Arc<Frontier>,
    seen_taken: Option<i64>,
}

impl Progress {
    /// The progress of a call in `scope`. Its frontier is the handle's, shared by its
    /// tasks; or, inside the caller's transaction, or through a bare database, one made
    /// for the call (a transaction reads the maximum in its own snapshot, which no other
    /// caller shares).
    pub(crate) fn new(scope: &Scope, cx: &Context<'_>) -> Self {
        let frontier = match cx.session.in_transaction() {
            true => Arc::new(Frontier::for_one_call()),
            false => cx.route.frontier(cx.seq, scope),
        };
        Progress {
            frontier,
            seen_taken: None,
        }
    }

    /// What the call's loop did, for [`Stats`](crate::Stats).
    pub(crate) fn tally(&self) -> &Tally {
        &self.frontier.allocator.tally
    }

    /// Candidates for `count` documents, all above every id this call saw taken (the
    /// maximum is then read above it).
    pub(crate) async fn candidates<M: Maximum>(
        &self,
        max: &M,
        scope: &Scope,
        count: usize,
        cx: &mut Context<'_>,
    ) -> Result<Arc<InFlight>, Error> {
        loop {
            let in_transaction = cx.session.in_transaction();
            let session = cx.session.join().filter(|_| in_transaction);
            let read = MaximumRead {
                seq: cx.seq,
                scope,
                above: self.seen_taken,
                session,
            };
            let allocated = self.frontier.candidates(max, read, count).await?;
            cx.reservations += u32::from(allocated.waited);
            let flight = allocated.ids;
            match self.seen_taken {
                // Ids that were already reserved when this call saw a higher one taken
                // (given back by a cancelled caller of the handle): dropped, and the
                // floor raised, so that the next reservation goes above.
                Some(taken) if flight.ids.iter().any(|&id| id <= taken) => {
                    flight.finish([taken]);
                }
                _ => return Ok(flight),
            }
        }
    }

    /// Records candidates of `flight` that another writer took: neither this call nor
    /// any other of the frontier tries them again.
    pub(crate) fn taken(&mut self, flight: &InFlight, ids: &[i64]) {
        flight.finish(ids.iter().copied());
        self.seen_taken = self.seen_taken.max(ids.iter().copied().max());
    }
}

/// [`crate::source::race_lost`] for an optimistic candidate: counted. Never stored, it is
/// free again: through a handle the frontier hands it out again, and a bare call's next
/// maximum reads it as free.
pub(crate) fn race_lost(cx: &Context<'_>, scope: &Scope, id: i64) {
    let frontier = cx.route.frontier(cx.seq, scope);
    let races_lost = &frontier.allocator.tally.races_lost;
    races_lost.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tracing::debug!(
        sequence = cx.seq.name,
        id,
        "another caller stored the key first"
    );
}

/// One write of the loop: the document under a candidate's key.
pub(crate) trait Attempt: Send {
    /// Writes the document with the id of `key`; `guard` is dropped when the write ends. A
    /// document whose id was taken is left unset.
    fn write(
        &mut self,
        key: &Key,
        guard: Arc<InFlight>,
        cx: &mut Context<'_>,
    ) -> impl Future<Output = Result<Fate, Error>> + Send;
}

/// The loop for one document in `scope`, with candidates above the maximum `max` reads:
/// the id of the last write and its fate (never [`Fate::Taken`]), or
/// [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted) once the call's budget is spent.
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
    // time (see `state::turns`).
    let bare = cx.route.registry.is_none() && !cx.session.in_transaction();
    while tries.next().await {
        let turn = match bare {
            true => turns::scope_turn(seq, scope, tries.patience()).await,
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
                continue;
            }
            // A refused id is free again: through a handle, the next insert takes it (no
            // gap while the handle goes on inserting).
            Fate::Refused(_) if cx.route.registry.is_some() => flight.give_back(key.id),
            Fate::Refused(_) => {}
            // Any other may be stored.
            _ => flight.finish([key.id]),
        }
        return Ok((key.id, fate));
    }
    let error = tries.exhausted(seq, None, last_id);
    tracing::warn!(sequence = seq.name, %error, "optimistic: gave up");
    Err(error)
}

#[cfg(test)]
mod tests {
    //! The loop against a maximum that lags or errs, without a server: a client connects
    //! lazily, and nothing here reaches it.

    use crate::base::error::ErrorKind;
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use mongodb::bson::Bson;

    use super::*;
    use crate::base::fate::Rejection;
    use crate::base::once::{Warning, first_time};
    use crate::call::registry::Route;
    use crate::optimistic::frontier::Ids;
    use crate::schema::sequence::Sequence;
    use std::time::Duration;

    use crate::base::retry::Budget;
    use crate::base::server::DUPLICATE_KEY;
    use crate::base::session::Session;
    use crate::call::registry::Registry;
    use crate::schema::sequence::construct::optimistic;
    use crate::schema::sequence::testing::on_id;

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
            MaximumRead { above, .. }: MaximumRead<'_>,
            ids: Ids,
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
            early_place: None,
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
        match outcome.map_err(Error::into_kind) {
            Err(ErrorKind::RetriesExhausted {
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
