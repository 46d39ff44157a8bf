//! The commit queue of one gapless counter (in one scope) in one process: the
//! transactions of the process that take ids from it take turns, first come first
//! served, each waiting until the one before it has committed.
//!
//! Why: a gapless id is taken inside the caller's transaction, which holds the counter
//! from its `$inc` until it commits. MongoDB does not make a second transaction wait for
//! it: the second `$inc` fails at once with a write conflict, which aborts the second
//! transaction, and the caller's `and_run` runs it again after a random backoff, to
//! conflict again while the first has not committed. Sixteen tasks of one process so
//! fought for one counter at a p99 of 1.2 s against 1.6 ms for one task (BENCHMARKS.md,
//! *Inserts in transactions*), and some lost for seconds.
//!
//! How: a transaction that finds the counter held by another of the process's sessions
//! waits in line. The first in line watches the holder: once the counter, read outside
//! any transaction, shows the holder's last id, the holder has committed, and the one in
//! line takes the counter (and its `$inc` will not conflict). Nothing is shared but who
//! goes next: every id still comes from the counter, in its transaction, so every promise
//! of `gapless` stands (no hole, ids in commit order, the caller's transaction its own),
//! and a process that runs no two at once sends nothing more.
//!
//! A holder that never shows its id (its transaction aborted, or still busy) is waited
//! for at most the queue's patience: eight times the time holders of this counter have
//! taken lately, between 20 ms and 2 s. Then the one in line goes on as without a queue:
//! at worst its `$inc` conflicts, its caller's `and_run` runs it again, and the hold it
//! took over is restored for the others to wait on. Other processes are not in line:
//! between processes, transactions conflict and retry as before.
//!
//! A session that holds the counter goes on without waiting (a second gapless insert in
//! the same transaction, or its `and_run` running it again), unless its last id shows
//! committed while others wait: it is then a new transaction of the same session, which
//! queues as any other. With no one in line, a hold that has lasted its usual time is
//! not looked at (a lone writer's last transaction, almost surely committed): a lone
//! writer reads nothing more than without the queue.

use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mongodb::bson::Document as BsonDocument;
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

/// The least and the most the first in line waits for a holder that does not show its id.
const PATIENCE: (Duration, Duration) = (Duration::from_millis(20), Duration::from_secs(2));

/// The longest pause between two reads of the counter by the first in line.
const LONGEST_PAUSE: Duration = Duration::from_millis(8);

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
}

/// The session holding the counter.
struct Holder {
    session: BsonDocument,
    /// The last id its transaction took; `None` while its `$inc` is under way.
    last: Option<i64>,
    /// When it took the counter, or its last id.
    since: Instant,
}

/// A session's hold on the counter, from before its `$inc` on: [`Turn::took`] records the
/// last id taken; dropped before that (the `$inc` failed or was cancelled), it lets the
/// next in line go at once.
pub(crate) struct Turn<'a> {
    queue: &'a CommitQueue,
    session: BsonDocument,
    /// Another session's hold this turn was taken over, not seen committed: restored if
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
    /// The turn of the transaction running in `session`, once the counter's holder, if
    /// another session, has committed. `committed` reads the last id the counter shows
    /// outside any transaction (`None` if it cannot tell).
    pub(crate) async fn turn<F, R>(&self, session: &BsonDocument, mut committed: F) -> Turn<'_>
    where
        F: FnMut() -> R,
        R: Future<Output = Option<i64>>,
    {
        if let Some(turn) = self.without_waiting(session, &mut committed).await {
            return turn;
        }
        // Closed never: the semaphore lives as long as the queue.
        let _first_in_line = self.line.acquire().await;
        let mut slow_reads = 0;
        loop {
            // Asked for before the state is read, so that no change in between is missed.
            let changed = self.changed.notified();
            let (last, since, patience, typical) = {
                let mut state = self.state();
                let (patience, typical) = (state.patience(), state.typical_hold);
                match &state.holder {
                    None => return self.take(&mut state, session),
                    Some(holder) if holder.session == *session => {
                        return self.take(&mut state, session);
                    }
                    Some(holder) => (holder.last, holder.since, patience, typical),
                }
            };
            let waited = since.elapsed();
            if waited >= patience {
                tracing::debug!(
                    waited_ms = waited.as_millis() as u64,
                    "seqid: the gapless counter's holder did not show its id committed; going on"
                );
                let mut state = self.state();
                state.typical_hold = Some(patience);
                return self.take(&mut state, session);
            }
            let Some(last) = last else {
                // Its `$inc` is under way: wait for its answer.
                let _ = tokio::time::timeout(patience - waited, changed).await;
                continue;
            };
            if committed().await.is_some_and(|shown| shown >= last) {
                let mut state = self.state();
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
                    return self.take(&mut state, session);
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

    /// The turn, if it needs no wait: no one is in line, or `session` holds the counter
    /// and its transaction is the one that took it (its last id not committed, or no one
    /// waits). With no one in line, another session's hold is not looked at: after a
    /// commit, the next transaction of a lone writer would otherwise read the counter
    /// first, every time. If that holder has not committed, this `$inc` conflicts (as
    /// without a queue), and the holder is restored for the transaction's next run.
    async fn without_waiting<F, R>(
        &self,
        session: &BsonDocument,
        committed: &mut F,
    ) -> Option<Turn<'_>>
    where
        F: FnMut() -> R,
        R: Future<Output = Option<i64>>,
    {
        let no_one_in_line = self.line.available_permits() > 0;
        let last = {
            let mut state = self.state();
            let typical = state.typical_hold;
            match &state.holder {
                Some(holder) if holder.session == *session => match holder.last {
                    Some(last) if !no_one_in_line => last,
                    _ => return Some(self.take(&mut state, session)),
                },
                None if no_one_in_line => return Some(self.take(&mut state, session)),
                // A hold that has lasted its usual time, no one waiting for it: a lone
                // writer's last transaction, most likely committed.
                Some(holder)
                    if no_one_in_line
                        && holder.last.is_some()
                        && typical.is_none_or(|typical| holder.since.elapsed() >= typical) =>
                {
                    return Some(self.take(&mut state, session));
                }
                _ => return None,
            }
        };
        // Others wait: a new transaction of the holding session queues behind them.
        let shown = committed().await;
        let mut state = self.state();
        let same = state
            .holder
            .as_ref()
            .is_some_and(|holder| holder.session == *session && holder.last == Some(last));
        match shown {
            Some(shown) if shown >= last => None,
            _ if same => Some(self.take(&mut state, session)),
            _ => None,
        }
    }

    fn take(&self, state: &mut State, session: &BsonDocument) -> Turn<'_> {
        let before = state.holder.replace(Holder {
            session: session.clone(),
            last: None,
            since: Instant::now(),
        });
        self.changed.notify_waiters();
        Turn {
            queue: self,
            session: session.clone(),
            before: before.filter(|holder| holder.session != *session && holder.last.is_some()),
            took: false,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// How long the first in line waits for a holder that does not show its id.
    fn patience(&self) -> Duration {
        let typical = self.typical_hold.unwrap_or(PATIENCE.1 / 8);
        (typical * 8).clamp(PATIENCE.0, PATIENCE.1)
    }
}

impl Turn<'_> {
    /// Records `last`, the last id the transaction took: the next in line waits until the
    /// counter shows it.
    pub(crate) fn took(mut self, last: i64) {
        self.took = true;
        let mut state = self.queue.state();
        if let Some(holder) = &mut state.holder
            && holder.session == self.session
        {
            holder.last = Some(last);
            holder.since = Instant::now();
        }
        drop(state);
        self.queue.changed.notify_waiters();
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if self.took {
            return;
        }
        // The `$inc` failed (which aborts the transaction) or was cancelled: this
        // session holds nothing; the hold it took over, if any, may still be there.
        let mut state = self.queue.state();
        if state
            .holder
            .as_ref()
            .is_some_and(|holder| holder.session == self.session)
        {
            // Restored as just seen: the next in line gives it a whole patience again.
            state.holder = self.before.take().map(|holder| Holder {
                since: Instant::now(),
                ..holder
            });
        }
        drop(state);
        self.queue.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};

    use mongodb::bson::doc;

    use super::*;
    use crate::future::BoxFuture;

    /// The counter as the tests show it: the last id committed, and how often it was read.
    #[derive(Default)]
    struct Shown {
        last: AtomicI64,
        reads: AtomicU32,
    }

    impl Shown {
        /// Reads the counter, a round trip of 1 ms.
        fn reader(self: &Arc<Self>) -> impl FnMut() -> BoxFuture<'static, Option<i64>> + use<> {
            let shown = Arc::clone(self);
            move || {
                let shown = Arc::clone(&shown);
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    shown.reads.fetch_add(1, Ordering::Relaxed);
                    Some(shown.last.load(Ordering::Relaxed))
                })
            }
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
        queue.state().typical_hold = Some(typical);
        Arc::new(queue)
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
        queue.turn(&session(0), shown.reader()).await.took(1);
        let order = Arc::new(Mutex::new(Vec::new()));
        let waiters: Vec<_> = (1..=3)
            .map(|n| {
                let (queue, shown, order) = (queue.clone(), shown.clone(), order.clone());
                tokio::spawn(async move {
                    let turn = queue.turn(&session(n), shown.reader()).await;
                    order.lock().unwrap().push(n);
                    turn.took(i64::from(n) + 1);
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
        queue.turn(&session(0), shown.reader()).await.took(1);
        let started = Instant::now();
        let waiter = {
            let (queue, shown) = (queue.clone(), shown.clone());
            tokio::spawn(async move {
                let turn = queue.turn(&session(1), shown.reader()).await;
                let waited = started.elapsed();
                // Its `$inc` fails: dropped without an id.
                drop(turn);
                waited
            })
        };
        let waited = waiter.await.unwrap();
        assert!(
            (PATIENCE.1..PATIENCE.1 + Duration::from_millis(50)).contains(&waited),
            "{waited:?}"
        );
        // The hold it took over is restored, and a later session waits for it again (a
        // whole patience, at most, now eight times the last one, so the longest).
        let reads = shown.reads.load(Ordering::Relaxed);
        let started = Instant::now();
        let second = {
            let (queue, shown) = (queue.clone(), shown.clone());
            tokio::spawn(async move {
                queue.turn(&session(2), shown.reader()).await.took(2);
                started.elapsed()
            })
        };
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
        let failing = queue.turn(&session(3), shown.reader()).await;
        let next = {
            let (queue, shown) = (queue.clone(), shown.clone());
            tokio::spawn(async move { queue.turn(&session(4), shown.reader()).await.took(9) })
        };
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
        queue.turn(&session(0), shown.reader()).await.took(1);
        let other = {
            let (queue, shown) = (queue.clone(), shown.clone());
            tokio::spawn(async move { queue.turn(&session(1), shown.reader()).await.took(3) })
        };
        settle().await;
        // Same transaction: its last id (1) is not committed.
        let again = tokio::time::timeout(
            Duration::from_millis(1),
            queue.turn(&session(0), shown.reader()),
        )
        .await
        .expect("the holder goes on without waiting");
        again.took(2);
        assert!(!other.is_finished());
        shown.commit(2);
        // A new transaction of session 0: behind session 1, which goes first.
        let next = {
            let (queue, shown) = (queue.clone(), shown.clone());
            tokio::spawn(async move { queue.turn(&session(0), shown.reader()).await.took(4) })
        };
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
        let queue = CommitQueue::default();
        let shown = Arc::new(Shown::default());
        for n in 0..5 {
            let turn = tokio::time::timeout(
                Duration::from_millis(1),
                queue.turn(&session(n), shown.reader()),
            )
            .await
            .expect("no wait");
            turn.took(i64::from(n) + 1);
            shown.commit(i64::from(n) + 1);
        }
        assert_eq!(shown.reads.load(Ordering::Relaxed), 0);
    }
}
