//! The optimistic loop: insert with a candidate id; when another writer took it
//! (duplicate key on the sequence's unique index), back off and try a fresh candidate, a
//! bounded number of times. Any other refusal is returned at once.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use mongodb::bson::Document as BsonDocument;

use super::{InFlight, Maximum, Progress};
use crate::backoff::backoff;
use crate::bulk::Batch;
use crate::context::Context;
use crate::fields::{fill, unset};
use crate::insert::conclude;
use crate::scope::{Scope, grouped};
use crate::write::{self, DUPLICATE_KEY, Fate, Key, Rejection, identity_index};
use crate::{Document, Error, IdValue};

/// Inserts `doc` in `scope` under the first candidate no other writer took.
pub(crate) async fn insert_one<T: Document>(
    doc: &mut T,
    scope: Scope,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    let max = cx.collection::<BsonDocument>();
    let mut filling = Filling { doc, value: None };
    let (id, fate) = run(&scope, &max, &mut filling, cx).await?;
    let value = filling.value.expect("the loop writes at least once");
    conclude(cx.seq, filling.doc, id, value, fate)
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
struct Filling<'d, T: Document> {
    doc: &'d mut T,
    /// The id value of the last candidate filled in.
    value: Option<IdValue<T>>,
}

impl<T: Document> Attempt for Filling<'_, T> {
    async fn write(
        &mut self,
        key: &Key,
        hold: Arc<InFlight>,
        cx: &mut Context<'_>,
    ) -> Result<Fate, Error> {
        self.value = Some(fill(cx.seq, self.doc, key.id)?);
        let fate = write::insert_one(&*self.doc, key, cx.first(), hold, cx).await;
        if matches!(fate, Fate::Taken(_)) {
            unset(self.doc);
        }
        Ok(fate)
    }
}

/// The loop for one document in `scope`, with candidates above the maximum `max` reads:
/// the id of the last write and its fate (never [`Fate::Taken`]), or
/// [`Error::RetriesExhausted`] after the call's attempts.
pub(crate) async fn run<M: Maximum, A: Attempt>(
    scope: &Scope,
    max: &M,
    attempt: &mut A,
    cx: &mut Context<'_>,
) -> Result<(i64, Fate), Error> {
    let seq = cx.seq;
    let mut progress = Progress::new(scope, cx);
    let mut last_id = 0;
    for n in 1..=cx.attempts {
        if n > 1 {
            backoff(n).await;
        }
        let flight = progress.candidates(max, scope, 1, cx).await?;
        let key = Key {
            scope: scope.clone(),
            id: flight.ids[0],
        };
        last_id = key.id;
        match attempt.write(&key, Arc::clone(&flight), cx).await? {
            Fate::Taken(_) => {
                progress.taken(&flight, &[key.id]);
                progress.tally().retried();
                tracing::debug!(
                    sequence = seq.name,
                    id = key.id,
                    attempt = n,
                    "optimistic: id taken by another writer; retrying"
                );
            }
            fate => {
                // A refused id is free again; any other may be stored.
                if !matches!(fate, Fate::Refused(_)) {
                    flight.finish([key.id]);
                }
                return Ok((key.id, fate));
            }
        }
    }
    let attempts = cx.attempts;
    tracing::warn!(
        sequence = seq.name,
        attempts,
        last_id,
        "optimistic: gave up"
    );
    Err(Error::RetriesExhausted {
        sequence: seq.name.to_owned(),
        collection: seq.collection.to_owned(),
        field: seq.field,
        attempts,
        last_id,
    })
}

/// Writes the documents waiting in `batch`, retrying those whose id another writer took,
/// up to the call's attempts. Each round takes the candidates of every scope, then writes
/// the whole round with one `insert_many`.
pub(crate) async fn insert_many<T: Document>(
    docs: &mut [T],
    scopes: &[Scope],
    mut batch: Batch<IdValue<T>>,
    cx: &mut Context<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let seq = cx.seq;
    let max = cx.collection::<BsonDocument>();
    // Kept for the whole call: what each round learned holds for the next.
    let mut progress: HashMap<Scope, Progress> = HashMap::new();
    for attempt in 1..=cx.attempts {
        let waiting = batch.waiting();
        if waiting.is_empty() {
            break;
        }
        if attempt > 1 {
            backoff(attempt).await;
        }
        let groups = grouped(waiting.iter().map(|&p| (scopes[p].clone(), p)));
        let mut flights = Vec::with_capacity(groups.len());
        for (scope, positions) in &groups {
            let progress = progress
                .entry(scope.clone())
                .or_insert_with(|| Progress::new(scope, cx));
            match progress.candidates(&max, scope, positions.len(), cx).await {
                Ok(flight) => flights.push(flight),
                Err(error) => return batch.abandon(seq, error),
            }
        }
        let (positions, keys): (Vec<usize>, Vec<Key>) = groups
            .iter()
            .zip(&flights)
            .flat_map(|((scope, positions), flight)| {
                positions.iter().zip(&flight.ids).map(|(&position, &id)| {
                    let key = Key {
                        scope: scope.clone(),
                        id,
                    };
                    (position, key)
                })
            })
            .unzip();
        let written = batch.fill_and_write(docs, positions, keys, flights.clone(), cx);
        let taken = match written.await {
            Ok(taken) => taken,
            Err(error) => return batch.abandon(seq, error),
        };
        // Another writer took these ids: the documents wait for new ones.
        let mut retried = std::collections::HashSet::with_capacity(taken.len());
        for taken in &taken {
            unset(&mut docs[taken.position]);
            retried.insert(taken.position);
        }
        // Taken ids are never tried again by this call; every other candidate not refused
        // is stored or maybe stored: above it next time.
        for ((scope, positions), flight) in groups.iter().zip(flights) {
            let progress = progress.get_mut(scope).expect("made above");
            let (taken, others): (Vec<_>, Vec<_>) = positions
                .iter()
                .zip(&flight.ids)
                .partition(|(p, _)| retried.contains(*p));
            let taken: Vec<i64> = taken.into_iter().map(|(_, &id)| id).collect();
            let used = others.into_iter().filter(|(p, _)| !batch.failed(**p));
            flight.finish(used.map(|(_, &id)| id));
            progress.taken(&flight, &taken);
            let retries = &progress.tally().retries;
            retries.fetch_add(taken.len() as u64, Ordering::Relaxed);
        }
    }
    let attempts = cx.attempts;
    for position in batch.waiting() {
        batch.fail(
            position,
            Rejection {
                code: Some(DUPLICATE_KEY),
                message: format!(
                    "every {} tried in {attempts} attempts was taken by another writer",
                    seq.field
                ),
                index: Some(identity_index(seq)),
                ..Rejection::default()
            },
        );
    }
    batch.conclude(seq)
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
    use crate::largest::Ids;
    use crate::once::{Warning, first_time};
    use crate::sequence::construct::{Parts, optimistic, sequence};
    use crate::sequences::{Route, Sequences};
    use crate::session::Session;
    use crate::{CounterWriteConcern, Sequence};

    const fn seq(name: &'static str) -> Sequence {
        sequence(Parts {
            name,
            collection: name,
            counters: "counters",
            strategy: optimistic(16),
            counter_write_concern: CounterWriteConcern::Majority,
            start: 1,
            field: "_id",
            scope: &[],
        })
    }

    /// A maximum query that answers `answers` in turn, then the last one for ever.
    #[derive(Clone)]
    struct Answers(Arc<Mutex<VecDeque<i64>>>);

    impl Answers {
        fn new(answers: &[i64]) -> Self {
            Answers(Arc::new(Mutex::new(answers.iter().copied().collect())))
        }
    }

    impl Maximum for Answers {
        async fn largest(
            &self,
            _: &Sequence,
            _: &Scope,
            ids: Ids,
            _: Option<&mut ClientSession>,
        ) -> Result<(Option<Bson>, Ids), Error> {
            let mut answers = self.0.lock().unwrap();
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

    /// Runs the loop once for `seq`, through a handle or a bare database, against `max`
    /// and another writer holding every id up to `taken_through`.
    async fn run_loop(
        seq: &'static Sequence,
        handle: bool,
        max: &Answers,
        taken_through: i64,
    ) -> (Result<(i64, Fate), Error>, Vec<i64>) {
        let db = database().await;
        let sequences = Sequences::new(db.client());
        let route = Route {
            db: &db,
            sequences: handle.then_some(&sequences),
            collections: None,
        };
        let mut cx = Context {
            seq,
            route,
            session: Session::none(),
            attempts: 16,
            content_is_unique: false,
            reservations: 0,
        };
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
    #[tokio::test]
    async fn the_loop_gives_up_after_its_attempts_with_every_id_tried_once() {
        const SEQ: Sequence = seq("exhausted");
        let (outcome, tried) = run_loop(&SEQ, false, &Answers::new(&[72]), 1_000).await;
        match outcome {
            Err(Error::RetriesExhausted {
                attempts, last_id, ..
            }) => assert_eq!((attempts, last_id), (16, 88)),
            other => panic!("expected RetriesExhausted, got {other:?}"),
        }
        assert_eq!(tried, (73..=88).collect::<Vec<_>>());
    }

    /// A maximum that goes backwards between two reads of one call is warned of (once per
    /// process and sequence); one that only rises is not.
    #[tokio::test]
    async fn a_maximum_going_backwards_is_warned_of_once() {
        const BACKWARDS: Sequence = seq("backwards");
        const RISING: Sequence = seq("rising");
        let (outcome, tried) = run_loop(&BACKWARDS, false, &Answers::new(&[80, 72]), 85).await;
        assert_eq!(outcome.unwrap().0, 86);
        assert_eq!(tried, (81..=86).collect::<Vec<_>>());
        assert!(
            !first_time(Warning::MaximumBackwards, &BACKWARDS),
            "the warning was logged"
        );
        let (outcome, _) = run_loop(&RISING, false, &Answers::new(&[72, 80, 90]), 85).await;
        assert_eq!(outcome.unwrap().0, 91);
        assert!(first_time(Warning::MaximumBackwards, &RISING));
    }

    /// What `insert_many` relies on: the candidates of a round, some of them taken, are
    /// followed by candidates above every one taken, however the maximum lags.
    #[tokio::test]
    async fn a_rounds_taken_candidates_are_never_handed_out_again() {
        const SEQ: Sequence = seq("rounds");
        let db = database().await;
        for handle in [false, true] {
            let sequences = Sequences::new(db.client());
            let mut cx = Context {
                seq: &SEQ,
                route: Route {
                    db: &db,
                    sequences: handle.then_some(&sequences),
                    collections: None,
                },
                session: Session::none(),
                attempts: 16,
                content_is_unique: false,
                reservations: 0,
            };
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
