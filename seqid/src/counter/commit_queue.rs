//! The commit queues of gapless counters: the transactions of the process that take ids
//! from one counter (in one scope) take turns, first come first served, each waiting
//! until the one before it has committed, whatever handle or bare database they came
//! through.
//!
//! Why: a gapless id is taken inside the caller's transaction, which holds the counter
//! from its `$inc` until it commits. MongoDB does not make a second transaction wait for
//! it: the second `$inc` fails at once with a write conflict, which aborts the second
//! transaction, and the caller's retry (`Transaction`, the driver's `and_run`) runs it
//! again after a random backoff, to conflict again while the first has not committed.
//! Sixteen tasks of one process so fought for one counter at a p99 of 1.2 s against
//! 1.6 ms for one task (BENCHMARKS.md, *Inserts in transactions*), and some lost for
//! seconds. A line per
//! [`Sequences`](crate::Sequences) handle was not enough: a process easily holds two (two
//! libraries, a test helper and the application), and calls through a bare
//! `mongodb::Database` kept none, so their transactions fought as before (16 tasks split
//! over two handles ran their transactions again 30 to 36 times for 32 commits, over two
//! bare databases 129 to 150 times, where one handle ran none again;
//! `tests/it/transactions.rs`).
//!
//! How: one line per counter for the whole process, in a process-wide registry, by what
//! names the counter without a client ([`Line`]: the database's name, the counters
//! collection and the filter that finds the counter). A transaction that finds the
//! counter held by another session waits in line. The first in line watches the holder:
//! once the counter, read outside any transaction, shows the holder's last id, the holder
//! has committed, and the one in line takes the counter (and its `$inc` will not
//! conflict). Nothing is shared but who goes next: every id still comes from the counter,
//! in its transaction, so every promise of `gapless` stands (no hole, ids in commit
//! order, the caller's transaction its own), and a process that runs no two at once sends
//! nothing more.
//!
//! The driver cannot tell which deployment a `mongodb::Database` belongs to, so two
//! deployments whose database, counters collection and counter are named alike share a
//! line. That costs them order, never a stall or a wrong decision: the holder leaves, in
//! its hold, how to read *its own* counter (a [`Reader`] made from its own database), and
//! the one in line reads the holder's counter with it, never its own. A transaction
//! behind a holder of the other deployment waits for that holder's real commit (a round
//! trip or two after its `$inc`), and then goes; each read is bounded by what is left of
//! the patience, so an unreachable deployment holds no one back longer than the patience.
//!
//! A holder that never shows its id (its transaction aborted, or still busy) is waited
//! for at most the queue's patience: eight times the time holders of this counter have
//! taken lately, between 20 ms and 2 s. Then the one in line goes on as without a queue:
//! at worst its `$inc` conflicts, its caller's retry runs it again, and the hold it
//! took over is restored for the others to wait on. Other processes are not in line:
//! between processes, transactions conflict and retry as before. So does a transaction
//! that read on its own before its gapless `$inc` and then waited its turn: its snapshot
//! is older than the commit it waited for, and its `$inc` conflicts all the same. seqid's
//! own calls that read first (`number_draft`, `find_or_insert`) take their turn before
//! their first read (`counted::place_before_reading`), so that theirs do not.
//!
//! A session that holds the counter goes on without waiting (a second gapless insert in
//! the same transaction, or its retry running it again), unless its last id shows
//! committed while others wait: it is then a new transaction of the same session, which
//! queues as any other. With no one in line, a hold that has lasted its usual time is
//! not looked at (a lone writer's last transaction, almost surely committed): a lone
//! writer reads nothing more than without the queue.
//!
//! A queue lives while a transaction holds or waits for its turn, and while its last hold
//! is recent: a hold not seen committed matters up to the longest patience, 2 s, so after
//! a hold is recorded a task of the queue's own keeps it that long (one task per queue in
//! use, not one per transaction). Then it is dropped, with the holder's reader (and the
//! clone of its database, which would keep its client alive), and its entry in the
//! registry is swept when another queue is made: memory stays bounded however many scopes
//! a sequence counts in (one counter per year and tenant).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mongodb::bson::Document as BsonDocument;
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

use crate::base::future::BoxFuture;
use crate::base::lock;
use crate::state::turns::Lines;

/// The least and the most the first in line waits for a holder that does not show its id.
const PATIENCE: (Duration, Duration) = (Duration::from_millis(20), Duration::from_secs(2));

/// The longest pause between two reads of the counter by the first in line.
const LONGEST_PAUSE: Duration = Duration::from_millis(8);

/// Reads the last id a counter shows outside any transaction (`None` if it cannot tell),
/// in the deployment of the session that took it: owns a clone of that session's
/// database.
pub(crate) type Reader = Arc<dyn Fn() -> BoxFuture<'static, Option<i64>> + Send + Sync>;

/// What names a counter without a client: the database's name, the counters collection,
/// and the filter that finds the counter, as BSON bytes. Two deployments with the same
/// names share a line (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Line {
    db: String,
    counters: &'static str,
    filter: Vec<u8>,
}

impl Line {
    /// The line of the counter `filter` finds in the collection `counters` of the
    /// database `db`.
    pub(crate) fn of(db: &str, counters: &'static str, filter: &BsonDocument) -> Line {
        Line {
            db: db.to_owned(),
            counters,
            // A document always serializes; were it not to, its text names it as well.
            filter: mongodb::bson::to_vec(filter).unwrap_or_else(|_| filter.to_string().into()),
        }
    }
}

/// The commit queues of the process, by the counter they guard. An entry lives while its
/// queue does (see the module docs); dead entries are swept when a new one is made.
static QUEUES: Lines<Line, CommitQueue> = Lines::new();

/// The process's commit queue of the counter `line` names.
pub(crate) fn queue(line: Line) -> Arc<CommitQueue> {
    QUEUES.line(line, CommitQueue::default)
}

/// The commit queue of one counter in one scope (see the module docs).
pub(crate) struct CommitQueue {
    /// Who is first in line (Tokio's semaphore is fair: first come, first served).
    line: Semaphore,
    state: Mutex<State>,
    /// Told when the holder changes or shows its last id.
    changed: Notify,
}

#[derive(Default)]
struct State {
    holder: Option<Holder>,
    /// How long holders took lately, from their `$inc` until seen committed.
    typical_hold: Option<Duration>,
    /// Whether a task keeps the queue alive while its hold is recent.
    kept: bool,
}

/// The session holding the counter.
struct Holder {
    session: BsonDocument,
    /// The last id its transaction took; `None` while its `$inc` is under way.
    last: Option<i64>,
    /// When it took the counter, or its last id.
    since: Instant,
    /// Reads the counter in the holder's deployment.
    reader: Reader,
}

/// A session's place at the counter, from before its `$inc` on: [`Place::took`] records the
/// last id taken; dropped before that (the `$inc` failed or was cancelled), it lets the
/// next in line go at once.
pub(crate) struct Place {
    queue: Arc<CommitQueue>,
    session: BsonDocument,
    /// Another session's hold this place was taken over, not seen committed: restored if
    /// the `$inc` fails (it may have failed on that hold).
    before: Option<Holder>,
    took: bool,
}

impl Default for CommitQueue {
    fn default() -> Self {
        CommitQueue {
            line: Semaphore::new(1),
            state: Mutex::default(),
            changed: Notify::new(),
        }
    }
}

impl CommitQueue {
    /// The place of the transaction running in `session`, once the counter's holder, if
    /// another session, has committed. `reader` reads the counter in `session`'s
    /// deployment: the hold taken keeps it, for whoever waits behind it.
    pub(crate) async fn place(self: &Arc<Self>, session: &BsonDocument, reader: Reader) -> Place {
        if let Some(place) = self.without_waiting(session, &reader).await {
            return place;
        }
        // Closed never: the semaphore lives as long as the queue.
        let _first_in_line = self.line.acquire().await;
        let mut slow_reads = 0;
        loop {
            // Asked for before the state is read, so that no change in between is missed.
            let changed = self.changed.notified();
            let (last, since, patience, typical, holders) = {
                let mut state = lock(&self.state);
                let (patience, typical) = (state.patience(), state.typical_hold);
                // No hold but this session's, if any: the counter is its to take.
                let Some(holder) = state.holder.as_ref().filter(|h| h.session != *session) else {
                    return self.take(&mut state, session, reader);
                };
                let holders = Arc::clone(&holder.reader);
                (holder.last, holder.since, patience, typical, holders)
            };
            let waited = since.elapsed();
            if waited >= patience {
                tracing::debug!(
                    waited_ms = waited.as_millis() as u64,
                    "seqid: the gapless counter's holder did not show its id committed; going on"
                );
                let mut state = lock(&self.state);
                state.typical_hold = Some(patience);
                return self.take(&mut state, session, reader);
            }
            let Some(last) = last else {
                // Its `$inc` is under way: wait for its answer.
                let _ = tokio::time::timeout(patience - waited, changed).await;
                continue;
            };
            // The holder's counter, in the holder's deployment; no longer than the patience
            // left (a read that does not answer in time is a hold not seen committed).
            let shown = tokio::time::timeout(patience - waited, holders()).await;
            if shown.ok().flatten().is_some_and(|shown| shown >= last) {
                let mut state = lock(&self.state);
                // Taken only if it is still the holder seen committed.
                if state
                    .holder
                    .as_ref()
                    .is_some_and(|holder| holder.last == Some(last) && holder.since == since)
                {
                    let hold = since.elapsed();
                    state.typical_hold = Some(match state.typical_hold {
                        Some(typical) => (typical * 3 + hold) / 4,
                        None => hold,
                    });
                    return self.take(&mut state, session, reader);
                }
                continue;
            }
            // Read again at once while the hold is within twice its usual length (a
            // commit is a round trip away), then ever less often.
            if typical.is_some_and(|typical| since.elapsed() < typical * 2) {
                tokio::task::yield_now().await;
                continue;
            }
            slow_reads += 1;
            let pause = Duration::from_millis(1 << slow_reads.min(3)).min(LONGEST_PAUSE);
            let _ = tokio::time::timeout(pause, changed).await;
        }
    }

    /// The place, if it needs no wait: no one is in line, or `session` holds the counter
    /// and its transaction is the one that took it (its last id not committed, or no one
    /// waits). With no one in line, another session's hold is not looked at: after a
    /// commit, the next transaction of a lone writer would otherwise read the counter
    /// first, every time. If that holder has not committed, this `$inc` conflicts (as
    /// without a queue), and the holder is restored for the transaction's next run.
    async fn without_waiting(
        self: &Arc<Self>,
        session: &BsonDocument,
        reader: &Reader,
    ) -> Option<Place> {
        let no_one_in_line = self.line.available_permits() > 0;
        let (last, holders) = {
            let mut state = lock(&self.state);
            let typical = state.typical_hold;
            let lasted = |holder: &Holder| {
                holder.last.is_some()
                    && typical.is_none_or(|typical| holder.since.elapsed() >= typical)
            };
            match &state.holder {
                Some(holder) if holder.session == *session => match holder.last {
                    Some(last) if !no_one_in_line => (last, Arc::clone(&holder.reader)),
                    _ => return Some(self.take(&mut state, session, Arc::clone(reader))),
                },
                // No hold, or one that has lasted its usual time, and no one waiting for
                // it: a lone writer's last transaction, most likely committed.
                hold if no_one_in_line && hold.as_ref().is_none_or(lasted) => {
                    return Some(self.take(&mut state, session, Arc::clone(reader)));
                }
                _ => return None,
            }
        };
        // Others wait: a new transaction of the holding session queues behind them.
        let shown = holders().await;
        let mut state = lock(&self.state);
        let same = state
            .holder_of(session)
            .is_some_and(|h| h.last == Some(last));
        let committed = shown.is_some_and(|shown| shown >= last);
        (same && !committed).then(|| self.take(&mut state, session, Arc::clone(reader)))
    }

    fn take(self: &Arc<Self>, state: &mut State, session: &BsonDocument, reader: Reader) -> Place {
        let before = state.holder.replace(Holder {
            session: session.clone(),
            last: None,
            since: Instant::now(),
            reader,
        });
        self.changed.notify_waiters();
        Place {
            queue: Arc::clone(self),
            session: session.clone(),
            before: before.filter(|holder| holder.session != *session && holder.last.is_some()),
            took: false,
        }
    }

    /// Lets go of `state`, whose holder a place changed, and tells those in line. A hold
    /// recorded (`held`) keeps the queue alive while it is recent: unless a keeper runs,
    /// one is decided on under the state's lock and started once it is released
    /// ([`Keeper::start`]).
    fn release(self: &Arc<Self>, mut state: MutexGuard<'_, State>, held: bool) {
        let keep = held && !state.kept;
        state.kept |= keep;
        drop(state);
        if keep {
            Keeper(Some(Arc::clone(self))).start();
        }
        self.changed.notify_waiters();
    }
}

/// Keeps its queue alive while the queue's hold is recent (see the module docs): one task
/// per queue at a time. Dropped before it decided to end (no runtime to run it, or its
/// runtime shutting down), it lets the next hold start another.
struct Keeper(Option<Arc<CommitQueue>>);

impl Keeper {
    fn start(mut self) {
        // Without a runtime, dropped: the queue then lives as long as its places.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            while let Some(until) = self.until() {
                tokio::time::sleep_until(until).await;
            }
        });
    }

    /// When the hold is no longer recent; `None` if it is not now (or there is none), and
    /// then the keeper is done.
    fn until(&mut self) -> Option<Instant> {
        let queue = self.0.as_ref()?;
        let mut state = lock(&queue.state);
        if let Some(holder) = &state.holder
            && holder.since.elapsed() < PATIENCE.1
        {
            return Some(holder.since + PATIENCE.1);
        }
        // Decided under the lock: a hold recorded after this starts a keeper of its own.
        state.kept = false;
        drop(state);
        self.0 = None;
        None
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        if let Some(queue) = self.0.take() {
            lock(&queue.state).kept = false;
        }
    }
}

impl State {
    /// How long the first in line waits for a holder that does not show its id.
    fn patience(&self) -> Duration {
        let typical = self.typical_hold.unwrap_or(PATIENCE.1 / 8);
        (typical * 8).clamp(PATIENCE.0, PATIENCE.1)
    }

    /// The holder, if it is `session`.
    fn holder_of(&mut self, session: &BsonDocument) -> Option<&mut Holder> {
        self.holder
            .as_mut()
            .filter(|holder| holder.session == *session)
    }
}

impl Place {
    /// Records `last`, the last id the transaction took: the next in line waits until the
    /// counter shows it.
    pub(crate) fn took(mut self, last: i64) {
        self.took = true;
        let mut state = lock(&self.queue.state);
        if let Some(holder) = state.holder_of(&self.session) {
            holder.last = Some(last);
            holder.since = Instant::now();
        }
        self.queue.release(state, true);
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if self.took {
            return;
        }
        // The `$inc` failed (which aborts the transaction) or was cancelled: this
        // session holds nothing; the hold it took over, if any, may still be there.
        let mut state = lock(&self.queue.state);
        let ours = state.holder_of(&self.session).is_some();
        if ours {
            // Restored as just seen: the next in line gives it a whole patience again.
            state.holder = self.before.take().map(|holder| Holder {
                since: Instant::now(),
                ..holder
            });
        }
        let restored = ours && state.holder.is_some();
        self.queue.release(state, restored);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};

    use mongodb::bson::doc;

    use super::*;

    /// The counter as the tests show it: the last id committed, and how often it was read.
    #[derive(Default)]
    struct Shown {
        last: AtomicI64,
        reads: AtomicU32,
    }

    impl Shown {
        /// Reads the counter, a round trip of 1 ms.
        fn reader(self: &Arc<Self>) -> Reader {
            let shown = Arc::clone(self);
            Arc::new(move || {
                let shown = Arc::clone(&shown);
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    shown.reads.fetch_add(1, Ordering::Relaxed);
                    Some(shown.last.load(Ordering::Relaxed))
                }) as BoxFuture<'static, Option<i64>>
            })
        }

        fn reads(&self) -> u32 {
            self.reads.load(Ordering::Relaxed)
        }

        fn commit(&self, last: i64) {
            self.last.store(last, Ordering::Relaxed);
        }
    }

    fn session(n: i32) -> BsonDocument {
        doc! { "id": n }
    }

    /// A queue whose holds have been seen to last `typical` (until then, a session that
    /// finds no one in line takes the counter over: a lone writer's, see
    /// [`a_lone_writer_reads_nothing`]). 250 ms gives the longest patience.
    fn contended(typical: Duration) -> Arc<CommitQueue> {
        let queue = CommitQueue::default();
        lock(&queue.state).typical_hold = Some(typical);
        Arc::new(queue)
    }

    /// A task that waits for its turn in `queue` as session `n`, reading the counter
    /// `shown`, then takes the counter up to `last` (`None`: its `$inc` fails, and the
    /// place is dropped without an id); it answers how long it waited since `started`.
    fn queued(
        queue: &Arc<CommitQueue>,
        n: i32,
        shown: &Arc<Shown>,
        started: Instant,
        last: Option<i64>,
    ) -> tokio::task::JoinHandle<Duration> {
        let (queue, reader) = (queue.clone(), shown.reader());
        tokio::spawn(async move {
            let place = queue.place(&session(n), reader).await;
            let waited = started.elapsed();
            match last {
                Some(last) => place.took(last),
                None => drop(place),
            }
            waited
        })
    }

    /// A waiter that `waited` went once the holder committed, at `committed`, and not at
    /// the end of its patience.
    fn went_on_the_commit(waited: Duration, committed: Duration) {
        assert!(
            waited < committed + Duration::from_millis(10),
            "{waited:?}, committed at {committed:?}: not the patience"
        );
    }

    /// Lets every spawned task run as far as it can without time passing.
    async fn settle() {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    /// Sessions in line take the counter in the order they came, each once the one
    /// before it shows its last id committed, and not before.
    #[tokio::test(start_paused = true)]
    async fn transactions_take_the_counter_in_turn_each_after_the_last_has_committed() {
        let queue = contended(Duration::from_millis(250));
        let shown = Arc::new(Shown::default());
        queue.place(&session(0), shown.reader()).await.took(1);
        let order = Arc::new(Mutex::new(Vec::new()));
        let waiters: Vec<_> = (1..=3)
            .map(|n| {
                let (queue, shown, order) = (queue.clone(), shown.clone(), order.clone());
                tokio::spawn(async move {
                    let place = queue.place(&session(n), shown.reader()).await;
                    order.lock().unwrap().push(n);
                    place.took(i64::from(n) + 1);
                })
            })
            .collect();
        settle().await;
        // The first holder has not committed: no one goes, however long it takes.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(order.lock().unwrap().is_empty());
        for n in 1..=3 {
            shown.commit(n);
            tokio::time::sleep(Duration::from_millis(10)).await;
            assert_eq!(order.lock().unwrap().len(), n as usize, "after commit {n}");
        }
        for waiter in waiters {
            waiter.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [1, 2, 3]);
    }

    /// A holder that never shows its id is waited for as long as the patience, then the
    /// first in line goes on; a session whose `$inc` failed lets the next go at once.
    #[tokio::test(start_paused = true)]
    async fn a_holder_that_never_commits_is_waited_for_no_longer_than_the_patience() {
        let queue = contended(Duration::from_millis(250));
        let shown = Arc::new(Shown::default());
        queue.place(&session(0), shown.reader()).await.took(1);
        let started = Instant::now();
        // Its `$inc` fails: dropped without an id.
        let waiter = queued(&queue, 1, &shown, started, None);
        let waited = waiter.await.unwrap();
        assert!(
            (PATIENCE.1..PATIENCE.1 + Duration::from_millis(50)).contains(&waited),
            "{waited:?}"
        );
        // The hold it took over is restored, and a later session waits for it again (a
        // whole patience, at most, now eight times the last one, so the longest).
        let reads = shown.reads.load(Ordering::Relaxed);
        let started = Instant::now();
        let second = queued(&queue, 2, &shown, started, Some(2));
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert!(
            shown.reads.load(Ordering::Relaxed) > reads,
            "it reads the counter"
        );
        shown.commit(1);
        let waited = second.await.unwrap();
        assert!(waited < Duration::from_millis(50), "{waited:?}");
        // A session whose `$inc` fails while others wait lets them go at once.
        shown.commit(2);
        let failing = queue.place(&session(3), shown.reader()).await;
        let next = queued(&queue, 4, &shown, Instant::now(), Some(9));
        settle().await;
        assert!(!next.is_finished());
        drop(failing);
        // At once: a read of the counter, no patience.
        tokio::time::timeout(Duration::from_millis(10), next)
            .await
            .expect("the next goes at once")
            .unwrap();
    }

    /// The holding session goes on without waiting while its transaction has not
    /// committed (a second insert in it, or its retry), and queues behind the others once
    /// its last id shows committed (a new transaction of the same session).
    #[tokio::test(start_paused = true)]
    async fn the_holding_session_goes_on_in_its_transaction_and_queues_in_its_next() {
        let queue = contended(Duration::from_millis(250));
        let shown = Arc::new(Shown::default());
        queue.place(&session(0), shown.reader()).await.took(1);
        let other = queued(&queue, 1, &shown, Instant::now(), Some(3));
        settle().await;
        // Same transaction: its last id (1) is not committed.
        let again = tokio::time::timeout(
            Duration::from_millis(1),
            queue.place(&session(0), shown.reader()),
        )
        .await
        .expect("the holder goes on without waiting");
        again.took(2);
        assert!(!other.is_finished());
        shown.commit(2);
        // A new transaction of session 0: behind session 1, which goes first.
        let next = queued(&queue, 0, &shown, Instant::now(), Some(4));
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert!(other.is_finished());
        assert!(!next.is_finished());
        shown.commit(3);
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert!(next.is_finished());
    }

    /// A lone writer's transactions, each in a session of its own, never read the counter:
    /// no one waits, and the last hold has lasted its usual time.
    #[tokio::test(start_paused = true)]
    async fn a_lone_writer_reads_nothing() {
        let queue = Arc::new(CommitQueue::default());
        let shown = Arc::new(Shown::default());
        for n in 0..5 {
            let place = tokio::time::timeout(
                Duration::from_millis(1),
                queue.place(&session(n), shown.reader()),
            )
            .await
            .expect("no wait");
            place.took(i64::from(n) + 1);
            shown.commit(i64::from(n) + 1);
        }
        assert_eq!(shown.reads.load(Ordering::Relaxed), 0);
    }

    /// Two deployments whose database and counter are named alike share a line, at the
    /// cost of order only: the one in line reads the holder's counter with the holder's
    /// reader, never with its own. So it does not go while the holder has not committed
    /// (its own counter may show a larger id already: a conflict), nor wait the patience
    /// once the holder has (its own may never show the holder's id: a stall).
    #[tokio::test(start_paused = true)]
    async fn a_holder_of_another_deployment_is_seen_committed_in_its_own() {
        // The longest patience, 2 s: a waiter that goes within milliseconds saw a commit.
        let queue = contended(Duration::from_millis(250));
        let (a, b) = (Arc::new(Shown::default()), Arc::new(Shown::default()));
        a.commit(6);
        b.commit(50);
        queue.place(&session(0), a.reader()).await.took(7);
        let started = Instant::now();
        let of_b = queued(&queue, 1, &b, started, Some(51));
        tokio::time::sleep(Duration::from_millis(100)).await;
        // Its own counter shows 50, past the holder's 7: it waits all the same.
        assert!(!of_b.is_finished(), "gone before the holder committed");
        assert_eq!(
            b.reads(),
            0,
            "its own deployment is not read for another's hold"
        );
        assert!(a.reads() > 0, "the holder's deployment is");
        let of_a = queued(&queue, 2, &a, started, Some(8));
        settle().await;
        let committed = started.elapsed();
        a.commit(7);
        went_on_the_commit(of_b.await.unwrap(), committed);
        // Now a holder of B (51) with one of A behind it, whose own counter shows 7 and
        // never 51: it reads B's, and goes once that shows 51.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!of_a.is_finished(), "gone before the holder committed");
        let reads_of_a = a.reads();
        let committed = started.elapsed();
        b.commit(51);
        went_on_the_commit(of_a.await.unwrap(), committed);
        assert_eq!(a.reads(), reads_of_a, "A is not read for B's hold");
    }

    /// The lines in use, of the database `db`: entries in the registry, and those whose
    /// queue lives.
    fn lines_of(db: &str) -> (usize, usize) {
        QUEUES.kept(|line| line.db == db)
    }

    /// One queue per counter for the process: it lives while a transaction holds its turn
    /// (or waits for it) and while its last hold is recent, up to the longest patience
    /// (2 s), then it is dropped, and its entry swept when another queue is made.
    #[tokio::test(start_paused = true)]
    async fn queues_live_while_their_holds_are_recent_and_are_swept_after() {
        const DB: &str = "commit_queue_sweep";
        let line = |n: u32| Line::of(DB, "counters", &doc! { "_id": format!("scope-{n}") });
        let shown = Arc::new(Shown::default());
        // A hundred scopes (say a year's counter for each tenant), one transaction each.
        for n in 0..100 {
            let place = queue(line(n))
                .place(&session(n as i32), shown.reader())
                .await;
            place.took(1);
        }
        assert_eq!(lines_of(DB), (100, 100));
        // One more whose `$inc` is under way, for longer than the patience.
        let held = queue(line(100)).place(&session(100), shown.reader()).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(lines_of(DB), (101, 101), "recent holds keep their queues");
        assert!(
            lock(&queue(line(0)).state).holder.is_some(),
            "the same queue"
        );
        // A new hold on scope 1 makes its queue live 2 s from now.
        queue(line(1))
            .place(&session(1001), shown.reader())
            .await
            .took(2);
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(
            lines_of(DB).1,
            2,
            "scope 1's hold is recent, scope 100 is held"
        );
        assert!(
            lock(&queue(line(0)).state).holder.is_none(),
            "scope 0's queue is a new one"
        );
        // Making it swept the others' entries.
        assert!(lines_of(DB).0 <= 3, "{:?}", lines_of(DB));
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(lines_of(DB).1, 1, "only the turn held keeps its queue");
        drop(held);
        let _new = queue(line(200));
        assert_eq!(lines_of(DB), (1, 1), "every dead entry swept");
    }
}
