//! Hands out ids reserved from the database, sharing round trips between callers.
//!
//! Callers that need ids while a reservation is already in flight queue up; when it
//! returns, the next caller in line reserves for *everyone* queued with one round trip
//! (group commit). The counters strategy reserves exactly what is queued; the block
//! strategy rounds up to whole blocks and keeps the rest in a [`LiveBlock`] that later
//! callers take from without any round trip. No lock is held across a database call.
//!
//! With a low-water mark (the block strategy through a handle, unless its sequence turns
//! it off), a caller that leaves the live block below it asks for the next block: one
//! reservation starts in the flusher, in a task of its own, while callers keep taking from
//! the live block, so that none of them waits for it; the ids it brings are above every id
//! of the live block, so the order of ids within a process stays increasing.
//!
//! The round trip runs in a flusher that serves the queue until it is empty, at most one at
//! a time. The caller that finds none running polls one while it waits for its own ids;
//! if that caller is cancelled (its future dropped by a timeout, a client hanging up), or
//! once it has its ids, the rest of the flusher runs in a task of its own: a reservation
//! is never dropped half-way on the wire, and the callers queued behind it never depend
//! on the caller that happened to start it. Nor on the task it runs in: a flusher dropped
//! before its end with that task (its runtime shutting down, while a handle shared by the
//! runtimes of several threads has callers waiting on another) tells the callers queued for
//! it to ask again, and the next of them starts a flusher.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::base::detach::Finishing;
use crate::base::error::Error;
use crate::base::lock;
use crate::fields::scope::Scope;
use crate::schema::sequence::Sequence;

/// One round trip that takes ids from the database. It owns what it needs, since it runs
/// in the flusher's task.
pub(crate) trait Reserver: Send + Sync + 'static {
    /// Takes `amount` ids, `first`, `first + step`, ... (`amount` of them), and returns
    /// `first`.
    fn reserve(
        &self,
        amount: u64,
        tally: &Tally,
    ) -> impl Future<Output = Result<i64, Error>> + Send;

    /// How far apart the ids of one reservation are (the sequence's `step`).
    fn step(&self) -> i64 {
        1
    }

    /// The error for a caller whose request the flusher dropped unanswered (it panicked).
    fn interrupted(&self) -> Error;
}

/// The error for callers whose reservation ended without an answer: the task making the
/// round trip panicked.
pub(crate) fn interrupted(seq: &'static Sequence, scope: &Scope) -> Error {
    Error::driver(
        seq,
        format!("reserving ids{}", scope.in_scope()),
        mongodb::error::Error::custom("the task making the round trip ended without an answer"),
    )
}

/// Ids handed to a caller, and whether it waited for the flusher for them (a
/// reservation round trip, shared with the callers waiting with it) rather than taking
/// them from the live block.
#[derive(Debug, Default)]
pub(crate) struct Allocated<T> {
    pub ids: T,
    pub waited: bool,
}

impl<T> Allocated<T> {
    /// Ids taken from the live block, without waiting.
    fn at_once(ids: T) -> Self {
        Allocated { ids, waited: false }
    }

    fn map<U>(self, f: impl FnOnce(T) -> U) -> Allocated<U> {
        Allocated {
            ids: f(self.ids),
            waited: self.waited,
        }
    }
}

/// What an allocator has done, for [`Stats`](crate::Stats).
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub reservations: AtomicU64,
    pub ids: AtomicU64,
    pub retries: AtomicU64,
    /// `find_or_insert` calls that took an id and found, when they wrote, another
    /// caller's document with their natural key.
    pub races_lost: AtomicU64,
    /// The counter was found, or found missing and made (or left to the upsert) after the
    /// check that no number of the sequence is stored without it: done on the first use of
    /// the counter through this allocator.
    pub counter_checked: AtomicBool,
}

impl Tally {
    pub(crate) fn retried(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }
}

/// A run of ids reserved and not yet handed out: `next`, `next + step`, ... (`left` of
/// them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    next: i64,
    left: u64,
    step: i64,
}

impl Span {
    fn new(first: i64, count: u64, step: i64) -> Self {
        Span {
            next: first,
            left: count,
            step,
        }
    }

    /// Takes up to `n` ids off the front.
    fn split_front(&mut self, n: u64) -> Span {
        let taken = Span::new(self.next, n.min(self.left), self.step);
        self.left -= taken.left;
        // Wrapping: once the last id (possibly i64::MAX) is taken, `next` is never read.
        self.next = self
            .next
            .wrapping_add((taken.left as i64).wrapping_mul(self.step));
        taken
    }

    fn ids(self) -> impl Iterator<Item = i64> {
        (0..self.left).map(move |i| self.next + i as i64 * self.step)
    }
}

/// Runs of ids reserved and not handed out, ascending. Usually one run; ids given back by
/// callers that were cancelled before they received them add more.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spans(VecDeque<Span>);

impl Spans {
    fn left(&self) -> u64 {
        self.0.iter().map(|span| span.left).sum()
    }

    /// Takes up to `n` ids off the first run; `None` if there is none.
    fn take_front(&mut self, n: u64) -> Option<Span> {
        let front = self.0.front_mut()?;
        let taken = front.split_front(n);
        if front.left == 0 {
            self.0.pop_front();
        }
        Some(taken)
    }

    /// Takes up to `n` ids off the front, in order.
    fn take(&mut self, mut n: u64) -> Vec<i64> {
        let mut ids = Vec::with_capacity(n as usize);
        while n > 0
            && let Some(taken) = self.take_front(n)
        {
            n -= taken.left;
            ids.extend(taken.ids());
        }
        ids
    }

    /// Adds `ids` (ascending) back, keeping the runs ascending.
    fn give_back(&mut self, ids: &[i64]) {
        for &id in ids {
            let at = self.0.partition_point(|span| span.next < id);
            self.0.insert(at, Span::new(id, 1, 1));
        }
    }

    fn append(&mut self, mut other: Spans) {
        self.0.append(&mut other.0);
        self.0.retain(|span| span.left > 0);
        self.0.make_contiguous().sort_by_key(|span| span.next);
    }
}

/// Ids reserved and not handed out yet; taking one is a short critical
/// section (no await, no allocation).
///
/// ```
/// use seqid::__private::LiveBlock;
///
/// let block = LiveBlock::new();
/// assert_eq!(block.take_one(), None);
/// block.refill(101, 3);
/// assert_eq!(block.take_one(), Some(101));
/// assert_eq!(block.take_one(), Some(102));
/// assert_eq!(block.remaining(), 1);
/// ```
#[derive(Debug, Default)]
pub struct LiveBlock {
    spans: Mutex<Spans>,
}

impl LiveBlock {
    /// An empty block.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next id, if any is left.
    pub fn take_one(&self) -> Option<i64> {
        lock(&self.spans).take_front(1).map(|taken| taken.next)
    }

    /// Replaces the (used up) block with `first ..= first + count - 1`.
    pub fn refill(&self, first: i64, count: u64) {
        *lock(&self.spans) = Spans(VecDeque::from([Span::new(first, count, 1)]));
    }

    /// How many ids are left.
    pub fn remaining(&self) -> u64 {
        lock(&self.spans).left()
    }

    /// The next id, without taking it.
    fn peek(&self) -> Option<i64> {
        lock(&self.spans).0.front().map(|span| span.next)
    }

    /// `n` ids if that many are left, else none (so a bulk insert is not split).
    fn take(&self, n: u64) -> Option<Vec<i64>> {
        let mut spans = lock(&self.spans);
        (spans.left() >= n).then(|| spans.take(n))
    }

    fn take_all(&self) -> Spans {
        std::mem::take(&mut *lock(&self.spans))
    }
}

struct Request {
    count: u64,
    reply: oneshot::Sender<Reply>,
}

/// What a queued caller is told.
enum Reply {
    Ids(Result<Handed, Error>),
    /// Its flusher ended before it was served, dropped with the task it ran in (a runtime
    /// shutting down, a task aborted) and not by a panic: nothing was handed to it, and it
    /// asks again, starting a flusher if none is running.
    Again,
}

/// Requests no flusher will serve, their flusher dropped before it ended: their callers ask
/// again, since they may wait on another runtime than the one that dropped it (a handle
/// shared by the runtimes of several threads) and no flusher would ever come for them
/// there. A flusher that panicked leaves them an error instead ([`Reserver::interrupted`]),
/// so that one panicking round trip is not run again by every caller in turn.
fn abandon(requests: Vec<Request>) {
    if std::thread::panicking() {
        return;
    }
    for request in requests {
        let _ = request.reply.send(Reply::Again);
    }
}

/// A batch being served: the requests not answered when it is dropped half-way are
/// [abandoned](abandon).
struct Batch(Vec<Request>);

impl Drop for Batch {
    fn drop(&mut self) {
        abandon(std::mem::take(&mut self.0));
    }
}

/// Ids sent to a caller. A caller cancelled after they were sent and before it took them
/// drops them with its end of the channel: they go back to the live block then, for the
/// next callers, as those of a caller cancelled before they were sent. A document with
/// several sequences holds its sequences' ids so until it has them all, and fills them in
/// together: a caller cancelled while one reservation is still out gives the others back.
pub(crate) struct Handed {
    ids: Vec<i64>,
    /// Where they go back to; `None` for ids no allocator handed out (a gapless
    /// reservation's, which the caller's transaction takes back).
    allocator: Option<Arc<Allocator>>,
}

impl Handed {
    /// Ids that go back nowhere when dropped.
    pub(crate) fn kept(ids: Vec<i64>) -> Self {
        Handed {
            ids,
            allocator: None,
        }
    }

    /// The ids, for good: from now on they are the caller's, used or lost.
    pub(crate) fn take(mut self) -> Vec<i64> {
        std::mem::take(&mut self.ids)
    }
}

impl std::fmt::Debug for Handed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Handed").field(&self.ids).finish()
    }
}

impl Drop for Handed {
    fn drop(&mut self) {
        if let Some(allocator) = &self.allocator
            && !self.ids.is_empty()
        {
            allocator.give_back(&self.ids);
        }
    }
}

/// The id allocator of one sequence in one [`Sequences`](crate::Sequences) handle, or of
/// one call through a bare database (see the module docs).
pub(crate) struct Allocator {
    /// Reservations are rounded up to a multiple of this: 1 reserves only what is asked.
    chunk: u64,
    live: LiveBlock,
    queue: Mutex<Vec<Request>>,
    /// Whether a flusher is running.
    flushing: AtomicBool,
    /// Below this many ids left in the live block, the next block is asked for before the
    /// live one is spent; 0: only when it is.
    low_water: u64,
    /// The next block is asked for, and its reservation has not ended yet.
    refill: AtomicBool,
    pub(crate) tally: Tally,
}

impl Allocator {
    pub(crate) fn new(chunk: u64) -> Self {
        Allocator {
            chunk: chunk.max(1),
            live: LiveBlock::new(),
            queue: Mutex::new(Vec::new()),
            flushing: AtomicBool::new(false),
            low_water: 0,
            refill: AtomicBool::new(false),
            tally: Tally::default(),
        }
    }

    /// This allocator, reserving its next block once less than half of the live one is
    /// left (a block of 1 once it is spent): the block strategy's through a handle. What
    /// it holds is then at most two blocks less one.
    pub(crate) fn refilled_early(self) -> Self {
        Allocator {
            low_water: self.chunk.div_ceil(2),
            ..self
        }
    }

    /// How many ids this allocator holds, reserved and not handed out yet, and the next
    /// it will hand out.
    pub(crate) fn held(&self) -> (u64, Option<i64>) {
        (self.live.remaining(), self.live.peek())
    }

    /// Drops the ids reserved and not handed out (the counter was set under them).
    pub(crate) fn discard(&self) {
        self.live.take_all();
    }

    /// Takes back `ids` (ascending) handed out by this allocator and known not to be
    /// stored (a `find_or_insert` that lost its race wrote nothing under them): the next
    /// callers take them first, as a cancelled caller's.
    pub(crate) fn give_back(&self, ids: &[i64]) {
        self.tally
            .ids
            .fetch_sub(ids.len() as u64, Ordering::Relaxed);
        lock(&self.live.spans).give_back(ids);
    }

    /// `ids` handed out by this allocator, which take them back if dropped.
    fn handed(self: &Arc<Self>, ids: Vec<i64>) -> Handed {
        Handed {
            ids,
            allocator: Some(Arc::clone(self)),
        }
    }

    /// Ids reserved and not handed out yet.
    pub(crate) fn unused(&self) -> u64 {
        self.live.remaining()
    }

    /// One id, as [`allocate`](Allocator::allocate) of one: from the live block without
    /// a `Vec` when it has one (the block strategy's common case).
    pub(crate) async fn allocate_one<S: Reserver>(
        self: &Arc<Self>,
        reserver: impl Fn() -> S,
    ) -> Result<Allocated<i64>, Error> {
        if let Some(id) = self.live.take_one() {
            self.tally.ids.fetch_add(1, Ordering::Relaxed);
            self.refill_if_low(&reserver);
            return Ok(Allocated::at_once(id));
        }
        // Boxed: its state is larger than the rest of a block insert's; a reservation
        // costs a round trip anyway (see `crate::insert`).
        Ok(Box::pin(self.allocate(1, reserver))
            .await?
            .map(|ids| ids[0]))
    }

    /// `count` distinct ids, increasing, never handed out before by this allocator.
    /// `source` makes the round trip, if one is needed, for the flusher's task.
    ///
    /// Cancel-safe: a caller dropped while it waits gets nothing, and the ids it would
    /// have had go back to the live block for the next callers.
    pub(crate) async fn allocate<S: Reserver>(
        self: &Arc<Self>,
        count: u64,
        reserver: impl Fn() -> S,
    ) -> Result<Allocated<Vec<i64>>, Error> {
        Ok(self
            .allocate_handed(count, reserver)
            .await?
            .map(Handed::take))
    }

    /// [`allocate`](Allocator::allocate), with the ids given back to this allocator if
    /// they are dropped before [`Handed::take`].
    pub(crate) async fn allocate_handed<S: Reserver>(
        self: &Arc<Self>,
        count: u64,
        reserver: impl Fn() -> S,
    ) -> Result<Allocated<Handed>, Error> {
        loop {
            // Always enough for none (`count` 0).
            if let Some(ids) = self.live.take(count) {
                self.tally.ids.fetch_add(count, Ordering::Relaxed);
                self.refill_if_low(&reserver);
                return Ok(Allocated::at_once(self.handed(ids)));
            }
            let (reply, mut answer) = oneshot::channel();
            lock(&self.queue).push(Request { count, reply });
            // No flusher running: this caller runs one, which serves the whole queue, its
            // own request included, until the queue is empty. The caller polls it only
            // until its own answer comes; the rest, if any, runs in a task of its own, and
            // so does all of it if the caller is cancelled first (see `crate::base::detach`).
            let mut flusher =
                Flushing::start(self).map(|flushing| Finishing::new(flushing.run(reserver())));
            let answer = std::future::poll_fn(|cx| {
                if let Some(flush) = flusher.as_mut()
                    && Pin::new(flush).poll(cx).is_ready()
                {
                    flusher = None;
                }
                Pin::new(&mut answer).poll(cx)
            })
            .await;
            match answer {
                Ok(Reply::Ids(result)) => {
                    return result.map(|ids| Allocated { ids, waited: true });
                }
                Ok(Reply::Again) => continue,
                Err(_) => return Err(reserver().interrupted()),
            }
        }
    }

    /// Asks for the next block if the live one is below the low-water mark and none is
    /// asked for yet: a flusher in a task of its own reserves it, unless one is running,
    /// which then does (see [`Flushing::run`]). With no tokio runtime to run it in, the
    /// block is reserved when it is spent, as without a mark.
    fn refill_if_low<S: Reserver>(self: &Arc<Self>, reserver: &impl Fn() -> S) {
        // No mark (counters, a bare database, `prefetch = false`): not even the block's lock.
        if self.low_water == 0
            || self.live.remaining() >= self.low_water
            || self.refill.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let Some(flushing) = Flushing::start(self) else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(flushing.run(reserver()))),
            Err(_) => {
                self.refill.store(false, Ordering::Release);
                // Callers that queued meanwhile ask again.
                drop(flushing);
            }
        }
    }

    /// Reserves the next block, if it is asked for and the live block is still below the
    /// mark (a flush for callers may have refilled it since), and adds it to the live
    /// block. Runs in the flusher. A failure is left to the caller that finds the block
    /// spent: it reserves as without a mark, and is told of its own failure.
    async fn refill_early<S: Reserver>(&self, reserver: &S) {
        if !self.refill.load(Ordering::Acquire) {
            return;
        }
        // Also if this is dropped half-way (its task dropped): a block asked for and never
        // coming would keep the next caller that goes below the mark from asking again.
        struct Asked<'a>(&'a AtomicBool);
        impl Drop for Asked<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _asked = Asked(&self.refill);
        if self.live.remaining() < self.low_water {
            self.tally.reservations.fetch_add(1, Ordering::Relaxed);
            match reserver.reserve(self.chunk, &self.tally).await {
                Ok(first) => {
                    let next = Span::new(first, self.chunk, reserver.step());
                    lock(&self.live.spans).append(Spans(VecDeque::from([next])));
                }
                Err(error) => {
                    tracing::debug!(%error, "seqid: the next block, asked for early, was not reserved")
                }
            }
        }
    }

    /// Serves every queued request: from the live block if it is enough, else with one
    /// reservation for all of them. Runs in the flusher.
    ///
    /// A request whose caller has gone (cancelled while it waited) gets nothing, and the
    /// ids it would have had stay in the live block for the next callers: no gap. (The
    /// optimistic loop's candidates stay registered in flight until a caller takes them
    /// from there, so no other reservation hands them out meanwhile.)
    async fn flush_queue<S: Reserver>(self: &Arc<Self>, reserver: &S) {
        let mut batch = Batch(std::mem::take(&mut *lock(&self.queue)));
        if batch.0.is_empty() {
            return;
        }
        let demand: u64 = batch
            .0
            .iter()
            .filter(|r| !r.reply.is_closed())
            .map(|r| r.count)
            .sum();
        // Put back on drop, so a cancelled flush loses no ids it did not hand out.
        let mut taken = TakenOut {
            live: &self.live,
            spans: self.live.take_all(),
        };
        if taken.spans.left() < demand {
            let mut amount = (demand - taken.spans.left()).div_ceil(self.chunk) * self.chunk;
            // What would be left below the mark: the next block in the same round trip, not
            // in one of its own right after.
            if taken.spans.left() + amount - demand < self.low_water {
                amount += self.chunk;
            }
            self.tally.reservations.fetch_add(1, Ordering::Relaxed);
            match reserver.reserve(amount, &self.tally).await {
                Ok(first) => taken
                    .spans
                    .0
                    .push_back(Span::new(first, amount, reserver.step())),
                Err(error) => {
                    for request in std::mem::take(&mut batch.0) {
                        let _ = request.reply.send(Reply::Ids(Err(error.clone())));
                    }
                    return;
                }
            }
        }
        for request in std::mem::take(&mut batch.0) {
            if request.reply.is_closed() {
                continue;
            }
            let ids = taken.spans.take(request.count);
            self.tally.ids.fetch_add(request.count, Ordering::Relaxed);
            // Cancelled just now: the ids go back to the next callers.
            if let Err(Reply::Ids(Ok(handed))) =
                request.reply.send(Reply::Ids(Ok(self.handed(ids))))
            {
                self.tally.ids.fetch_sub(request.count, Ordering::Relaxed);
                taken.spans.give_back(&handed.take());
            }
        }
    }
}

/// The running flusher: while it is held, no other starts; when it is dropped, at the
/// end of a round or because its task ended early (a panic, a runtime shutting down),
/// the next caller starts one, and the callers queued for it are [abandoned](abandon)
/// unless it ended a round.
struct Flushing {
    allocator: Arc<Allocator>,
    /// It ended a round (see [`Flushing::let_go`]).
    ended: bool,
}

impl Flushing {
    /// The flusher, if none is running.
    fn start(allocator: &Arc<Allocator>) -> Option<Flushing> {
        (!allocator.flushing.swap(true, Ordering::AcqRel)).then(|| Flushing {
            allocator: Arc::clone(allocator),
            ended: false,
        })
    }

    /// Ends a round: the callers queued meanwhile are this flusher's to look for again,
    /// or the next one's.
    fn let_go(mut self) {
        self.ended = true;
    }

    /// Serves the queue until it is empty, and reserves the next block when it is asked
    /// for.
    async fn run<S: Reserver>(self, reserver: S) {
        let allocator = Arc::clone(&self.allocator);
        let mut flushing = Some(self);
        while flushing.is_some() {
            allocator.flush_queue(&reserver).await;
            allocator.refill_early(&reserver).await;
            // Let go before looking: a request queued (or a block asked for) meanwhile saw
            // the flag still set, so it is served here, or by the flusher its caller
            // starts after this.
            if let Some(flushing) = flushing.take() {
                flushing.let_go();
            }
            if !lock(&allocator.queue).is_empty() || allocator.refill.load(Ordering::Acquire) {
                flushing = Flushing::start(&allocator);
            }
        }
    }
}

impl Drop for Flushing {
    fn drop(&mut self) {
        self.allocator.flushing.store(false, Ordering::Release);
        if !self.ended {
            abandon(std::mem::take(&mut *lock(&self.allocator.queue)));
        }
    }
}

/// Ids taken out of the live block by a flush; what is left goes back when it ends.
struct TakenOut<'a> {
    live: &'a LiveBlock,
    spans: Spans,
}

impl Drop for TakenOut<'_> {
    fn drop(&mut self) {
        let spans = std::mem::take(&mut self.spans);
        lock(&self.live.spans).append(spans);
    }
}

#[cfg(test)]
mod tests {
    use crate::base::error::ErrorKind;
    use std::sync::atomic::AtomicI64;
    use std::time::Duration;

    use super::*;

    /// A counter in memory, with a delay standing in for the round trip.
    #[derive(Default)]
    struct FakeCounter {
        seq: AtomicI64,
        calls: AtomicU64,
    }

    const SEQ: Sequence = crate::schema::sequence::testing::counted("s", "s");

    fn interrupted() -> Error {
        Error::new(
            &SEQ,
            ErrorKind::InvalidOption {
                option: "test",
                value: "x".into(),
                reason: "the flusher was interrupted".into(),
            },
        )
    }

    /// The fakes, shared with the test (an `Arc` is `'static`, as a source must be).
    impl<S: Reserver> Reserver for Arc<S> {
        async fn reserve(&self, amount: u64, tally: &Tally) -> Result<i64, Error> {
            (**self).reserve(amount, tally).await
        }

        fn interrupted(&self) -> Error {
            interrupted()
        }
    }

    impl Reserver for FakeCounter {
        async fn reserve(&self, amount: u64, _: &Tally) -> Result<i64, Error> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(2)).await;
            Ok(self.seq.fetch_add(amount as i64, Ordering::SeqCst) + 1)
        }

        fn interrupted(&self) -> Error {
            interrupted()
        }
    }

    #[tokio::test]
    async fn exact_reservations_hand_out_consecutive_ids() {
        let allocator = Arc::new(Allocator::new(1));
        let counter = Arc::new(FakeCounter::default());
        assert_eq!(
            allocator.allocate(1, || counter.clone()).await.unwrap().ids,
            vec![1]
        );
        assert_eq!(
            allocator.allocate(3, || counter.clone()).await.unwrap().ids,
            vec![2, 3, 4]
        );
        assert_eq!(counter.calls.load(Ordering::SeqCst), 2);
        assert_eq!(allocator.live.remaining(), 0, "chunk 1 keeps nothing back");
    }

    #[tokio::test]
    async fn blocks_serve_from_memory_until_used_up() {
        let allocator = Arc::new(Allocator::new(10));
        let counter = Arc::new(FakeCounter::default());
        let mut ids = Vec::new();
        for _ in 0..25 {
            ids.extend(allocator.allocate(1, || counter.clone()).await.unwrap().ids);
        }
        assert_eq!(ids, (1..=25).collect::<Vec<_>>());
        assert_eq!(counter.calls.load(Ordering::SeqCst), 3);
        // A bulk request larger than what is left takes the rest, then whole blocks.
        let bulk = allocator
            .allocate(12, || counter.clone())
            .await
            .unwrap()
            .ids;
        assert_eq!(bulk, (26..=37).collect::<Vec<_>>());
        assert_eq!(counter.seq.load(Ordering::SeqCst), 40);
        assert_eq!(allocator.live.remaining(), 3);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_callers_share_round_trips_and_get_distinct_ids() {
        let allocator = Arc::new(Allocator::new(1));
        let counter = Arc::new(FakeCounter::default());
        let tasks: Vec<_> = (0..64)
            .map(|_| {
                let (allocator, counter) = (allocator.clone(), counter.clone());
                tokio::spawn(async move {
                    let mut ids = Vec::new();
                    for _ in 0..20 {
                        ids.extend(allocator.allocate(1, || counter.clone()).await.unwrap().ids);
                    }
                    ids
                })
            })
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.unwrap());
        }
        all.sort_unstable();
        assert_eq!(all, (1..=1280).collect::<Vec<_>>(), "no gap, no duplicate");
        let calls = counter.calls.load(Ordering::SeqCst);
        assert!(
            calls < 1280 / 4,
            "requests waiting together share a round trip ({calls} trips)"
        );
    }

    /// A counter whose round trips wait for the test to let them through.
    struct GatedCounter {
        seq: AtomicI64,
        entered: AtomicU64,
        completed: AtomicU64,
        gate: tokio::sync::Semaphore,
    }

    impl Default for GatedCounter {
        fn default() -> Self {
            GatedCounter {
                seq: AtomicI64::new(0),
                entered: AtomicU64::new(0),
                completed: AtomicU64::new(0),
                gate: tokio::sync::Semaphore::new(0),
            }
        }
    }

    impl Reserver for GatedCounter {
        async fn reserve(&self, amount: u64, _: &Tally) -> Result<i64, Error> {
            self.entered.fetch_add(1, Ordering::SeqCst);
            self.gate.acquire().await.unwrap().forget();
            self.completed.fetch_add(1, Ordering::SeqCst);
            Ok(self.seq.fetch_add(amount as i64, Ordering::SeqCst) + 1)
        }

        fn interrupted(&self) -> Error {
            interrupted()
        }
    }

    async fn until(what: &str, condition: impl Fn() -> bool) {
        for _ in 0..2000 {
            if condition() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        panic!("timed out waiting for {what}");
    }

    /// Callers cancelled while queued, and while the round trip that serves them is in
    /// flight, by the thousand: their ids go to the next callers, none is lost.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cancelled_callers_give_their_ids_back() {
        for chunk in [1, 10] {
            let allocator = Arc::new(Allocator::new(chunk));
            let counter = Arc::new(GatedCounter::default());
            let mut handed = Vec::new();
            let mut cancelled = 0;
            for round in 0..100_u64 {
                let spawn = |count: u64| {
                    let (allocator, counter) = (allocator.clone(), counter.clone());
                    tokio::spawn(async move {
                        Ok::<_, Error>(allocator.allocate(count, || counter.clone()).await?.ids)
                    })
                };
                // Ids left from the round before are handed out first, without a round trip.
                let left = allocator.live.remaining();
                handed.extend(allocator.live.take(left).unwrap());
                // The first caller flushes, held at the gate; the others queue behind it.
                let entered = counter.entered.load(Ordering::SeqCst);
                let first = spawn(1);
                until("the first round trip", || {
                    counter.entered.load(Ordering::SeqCst) > entered
                })
                .await;
                let waiting: Vec<_> = (0..12).map(|i| spawn(1 + i % 3)).collect();
                until("the queue", || lock(&allocator.queue).len() == 12).await;
                // Ten more are cancelled while queued: they never get anything.
                for _ in 0..10 {
                    let queued = allocator.allocate(2, || counter.clone());
                    assert!(futures_util::FutureExt::now_or_never(queued).is_none());
                }
                counter.gate.add_permits(1);
                handed.extend(first.await.unwrap().unwrap());
                // The queue's round trip is in flight: cancel a third of its callers.
                until("the second round trip", || {
                    counter.entered.load(Ordering::SeqCst) > entered + 1
                })
                .await;
                let mut survivors = Vec::new();
                for (i, task) in waiting.into_iter().enumerate() {
                    if (i as u64 + round).is_multiple_of(3) {
                        task.abort();
                        assert!(task.await.unwrap_err().is_cancelled());
                        cancelled += 1;
                    } else {
                        survivors.push(task);
                    }
                }
                // The round trip in flight serves the survivors: it runs in the flusher's
                // task, not in a caller's, so cancelling callers never cuts it short. Let it
                // through, and close the gate again after.
                counter.gate.add_permits(64);
                for task in survivors {
                    handed.extend(task.await.unwrap().unwrap());
                }
                counter.gate.forget_permits(64);
            }
            let reserved = counter.seq.load(Ordering::SeqCst);
            let left = allocator.live.remaining();
            let mut distinct = handed.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), handed.len(), "an id handed out twice");
            assert!(cancelled >= 400, "{cancelled} cancellations");
            assert_eq!(
                handed.len() as u64 + left,
                reserved as u64,
                "chunk {chunk}: every reserved id is handed out or still live"
            );
            // The next caller takes the lowest id left, without a round trip.
            let trips = counter.entered.load(Ordering::SeqCst);
            if left > 0 {
                let next = allocator.allocate(1, || counter.clone()).await.unwrap().ids[0];
                assert_eq!(counter.entered.load(Ordering::SeqCst), trips);
                assert!(!handed.contains(&next) && next <= reserved);
            }
        }
    }

    /// The round trip runs in the flusher's task: cancelling the caller that started it
    /// does not cut it short (on the wire, that would drop a driver operation half-way),
    /// and the id it reserved goes to the caller queued behind.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_caller_does_not_cut_its_round_trip_short() {
        let allocator = Arc::new(Allocator::new(1));
        let counter = Arc::new(GatedCounter::default());
        let spawn = |count: u64| {
            let (allocator, counter) = (allocator.clone(), counter.clone());
            tokio::spawn(async move {
                Ok::<_, Error>(allocator.allocate(count, || counter.clone()).await?.ids)
            })
        };
        let first = spawn(1);
        until("the first round trip", || {
            counter.entered.load(Ordering::SeqCst) == 1
        })
        .await;
        let second = spawn(2);
        until("the queue", || lock(&allocator.queue).len() == 1).await;
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        counter.gate.add_permits(2);
        assert_eq!(second.await.unwrap().unwrap(), vec![1, 2]);
        assert_eq!(
            counter.completed.load(Ordering::SeqCst),
            counter.entered.load(Ordering::SeqCst),
            "every round trip ran to its end"
        );
        assert_eq!(counter.seq.load(Ordering::SeqCst), 2, "no id lost");
    }

    struct Failing;

    impl Reserver for Failing {
        async fn reserve(&self, _: u64, _: &Tally) -> Result<i64, Error> {
            Err(Error::new(
                &SEQ,
                ErrorKind::InvalidOption {
                    option: "test",
                    value: "x".into(),
                    reason: "always fails".into(),
                },
            ))
        }

        fn interrupted(&self) -> Error {
            interrupted()
        }
    }

    #[tokio::test]
    async fn a_failed_reservation_keeps_the_live_block() {
        let allocator = Arc::new(Allocator::new(10));
        allocator.live.refill(5, 2);
        let error = allocator.allocate(3, || Failing).await.unwrap_err();
        assert!(matches!(error.kind(), ErrorKind::InvalidOption { .. }));
        assert_eq!(
            allocator.live.remaining(),
            2,
            "ids held during the failed flush are put back"
        );
        assert_eq!(
            allocator.allocate(2, || Failing).await.unwrap().ids,
            vec![5, 6]
        );
    }

    /// Refilled early: once less than half of the live block is left, the next block is
    /// reserved while callers go on taking from the live one, none waiting for it; the
    /// ids stay increasing, and what is held never exceeds two blocks less one. Without
    /// the mark, the caller who finds the block spent waits for the next.
    #[tokio::test]
    async fn the_next_block_is_reserved_before_the_live_one_is_spent() {
        let counter = Arc::new(GatedCounter::default());
        let allocator = Arc::new(Allocator::new(10).refilled_early());
        counter.gate.add_permits(1);
        let first = allocator.allocate_one(|| counter.clone()).await.unwrap();
        assert_eq!((first.ids, first.waited), (1, true));
        // 2..=5 leave 5 (not below half): nothing asked.
        for id in 2..=5 {
            let taken = allocator.allocate_one(|| counter.clone()).await.unwrap();
            assert_eq!((taken.ids, taken.waited), (id, false));
        }
        assert_eq!(counter.entered.load(Ordering::SeqCst), 1);
        // 6 leaves 4: the next block is asked for, and its round trip held at the gate
        // while 7..=10 are taken at once.
        assert_eq!(
            allocator
                .allocate_one(|| counter.clone())
                .await
                .unwrap()
                .ids,
            6
        );
        until("the early reservation", || {
            counter.entered.load(Ordering::SeqCst) == 2
        })
        .await;
        for id in 7..=10 {
            let taken = allocator.allocate_one(|| counter.clone()).await.unwrap();
            assert_eq!(
                (taken.ids, taken.waited),
                (id, false),
                "not held up by the refill"
            );
        }
        assert_eq!(
            counter.completed.load(Ordering::SeqCst),
            1,
            "still in flight"
        );
        counter.gate.add_permits(1);
        until("the next block", || allocator.unused() == 10).await;
        assert_eq!(allocator.held(), (10, Some(11)));
        assert_eq!(allocator.tally.reservations.load(Ordering::SeqCst), 2);
        // The next block's ids, in order, without a wait; at most two blocks less one held.
        let mut most = 0;
        for id in 11..=40 {
            counter.gate.add_permits(1);
            let taken = allocator.allocate_one(|| counter.clone()).await.unwrap();
            assert_eq!((taken.ids, taken.waited), (id, false));
            tokio::time::sleep(Duration::from_millis(1)).await;
            most = most.max(allocator.unused());
        }
        assert!(most <= 19, "held {most}: more than two blocks less one");

        // Without the mark: the caller who finds the block spent waits for the next.
        let counter = Arc::new(FakeCounter::default());
        let allocator = Arc::new(Allocator::new(10));
        let waits: Vec<bool> = waits_of(&allocator, &counter, 21).await;
        let waited: Vec<usize> = (0..21).filter(|&i| waits[i]).collect();
        assert_eq!(waited, [0, 10, 20]);
        assert_eq!(counter.calls.load(Ordering::SeqCst), 3);
    }

    /// A runtime of its own, as another thread's: dropping it drops the tasks spawned on it.
    fn other_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    }

    /// A handle shared by the runtimes of several threads: the flusher runs in a task of
    /// the runtime of the caller that started it, and that runtime shuts down with its round
    /// trip in flight. The callers queued for it on another runtime, before the round trip
    /// went out and while it was in flight, ask again instead of waiting for ever, and every
    /// one gets ids of its own.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn callers_whose_flusher_s_runtime_shut_down_ask_again() {
        for chunk in [1, 10] {
            let allocator = Arc::new(Allocator::new(chunk));
            let counter = Arc::new(GatedCounter::default());
            let other = other_runtime();
            // Its caller is cancelled at once: the rest of its flusher, the round trip held
            // at the gate, runs in a task of the other runtime.
            let started = {
                let (allocator, counter) = (allocator.clone(), counter.clone());
                other.spawn(async move { allocator.allocate(1, || counter.clone()).await })
            };
            until("the round trip on the other runtime", || {
                counter.entered.load(Ordering::SeqCst) == 1
            })
            .await;
            started.abort();
            assert!(started.await.unwrap_err().is_cancelled());
            assert!(allocator.flushing.load(Ordering::SeqCst), "still in flight");
            let waiting: Vec<_> = (0..8)
                .map(|i| {
                    let (allocator, counter) = (allocator.clone(), counter.clone());
                    tokio::spawn(
                        async move { allocator.allocate(1 + i % 2, || counter.clone()).await },
                    )
                })
                .collect();
            until("the queue", || lock(&allocator.queue).len() == 8).await;
            other.shutdown_background();
            // The first to ask again starts a flusher, held at the gate; the rest queue for it.
            until("a flusher started again", || {
                counter.entered.load(Ordering::SeqCst) == 2
            })
            .await;
            until("the queue again", || lock(&allocator.queue).len() == 7).await;
            counter.gate.add_permits(8);
            let mut ids = Vec::new();
            for task in waiting {
                let served = tokio::time::timeout(Duration::from_secs(10), task)
                    .await
                    .expect("a caller waited for a flusher that was gone")
                    .unwrap()
                    .unwrap();
                assert!(served.waited);
                ids.extend(served.ids);
            }
            let mut distinct = ids.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(
                (ids.len(), distinct.len()),
                (12, 12),
                "chunk {chunk}: {ids:?}"
            );
            assert!(
                counter.entered.load(Ordering::SeqCst) <= 3,
                "the dropped round trip, the first caller's again and one for the queue"
            );
            assert!(
                ids.iter()
                    .all(|&id| id <= counter.seq.load(Ordering::SeqCst))
            );
        }
    }

    /// A flusher that panics leaves the callers queued for it an error, not a wait for
    /// ever, and not the panic again in each of their tasks.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn callers_whose_flusher_panicked_are_told() {
        /// Panics once the test lets its round trip through.
        struct Panicking(tokio::sync::Semaphore, AtomicU64);
        impl Reserver for Panicking {
            async fn reserve(&self, _: u64, _: &Tally) -> Result<i64, Error> {
                self.1.fetch_add(1, Ordering::SeqCst);
                self.0.acquire().await.unwrap().forget();
                panic!("the round trip panicked");
            }
            fn interrupted(&self) -> Error {
                interrupted()
            }
        }
        let allocator = Arc::new(Allocator::new(1));
        let reserver = Arc::new(Panicking(tokio::sync::Semaphore::new(0), AtomicU64::new(0)));
        let spawn = || {
            let (allocator, reserver) = (allocator.clone(), reserver.clone());
            tokio::spawn(async move { allocator.allocate(1, || reserver.clone()).await })
        };
        let first = spawn();
        until("the round trip", || reserver.1.load(Ordering::SeqCst) == 1).await;
        let waiting: Vec<_> = (0..4).map(|_| spawn()).collect();
        until("the queue", || lock(&allocator.queue).len() == 4).await;
        reserver.0.add_permits(1);
        assert!(first.await.unwrap_err().is_panic());
        for task in waiting {
            let told = tokio::time::timeout(Duration::from_secs(10), task)
                .await
                .expect("a caller waited for a flusher that panicked")
                .unwrap();
            assert_eq!(told.unwrap_err().to_string(), interrupted().to_string());
        }
        assert_eq!(reserver.1.load(Ordering::SeqCst), 1, "not run again");
        assert!(!allocator.flushing.load(Ordering::SeqCst));
    }

    /// The next block asked for early, its round trip dropped with the runtime it ran in:
    /// the next caller that goes below the mark asks for it again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_early_refill_dropped_half_way_is_asked_for_again() {
        let counter = Arc::new(GatedCounter::default());
        let allocator = Arc::new(Allocator::new(10).refilled_early());
        counter.gate.add_permits(1);
        let other = other_runtime();
        let take = |runtime: &tokio::runtime::Handle| {
            let (allocator, counter) = (allocator.clone(), counter.clone());
            runtime.spawn(async move { allocator.allocate_one(|| counter.clone()).await })
        };
        let here = tokio::runtime::Handle::current();
        for id in 1..=5 {
            assert_eq!(take(&here).await.unwrap().unwrap().ids, id);
        }
        // 6 leaves 4, on the other runtime: the refill runs there, held at the gate.
        assert_eq!(take(other.handle()).await.unwrap().unwrap().ids, 6);
        until("the early reservation", || {
            counter.entered.load(Ordering::SeqCst) == 2
        })
        .await;
        other.shutdown_background();
        until("the refill given up", || {
            !allocator.refill.load(Ordering::SeqCst) && !allocator.flushing.load(Ordering::SeqCst)
        })
        .await;
        counter.gate.add_permits(1);
        assert_eq!(take(&here).await.unwrap().unwrap().ids, 7);
        until("the refill asked again", || {
            counter.entered.load(Ordering::SeqCst) == 3
        })
        .await;
        until("the next block", || allocator.unused() == 13).await;
        assert_eq!(allocator.held(), (13, Some(8)));
    }

    /// Whether each of `n` calls one after the other waited for a round trip.
    async fn waits_of(
        allocator: &Arc<Allocator>,
        counter: &Arc<FakeCounter>,
        n: usize,
    ) -> Vec<bool> {
        let mut waits = Vec::new();
        for _ in 0..n {
            waits.push(
                allocator
                    .allocate_one(|| counter.clone())
                    .await
                    .unwrap()
                    .waited,
            );
        }
        waits
    }

    /// A refill that fails hands nothing out and is no caller's error: the caller that finds
    /// the block spent reserves, as without the mark, and is told of its own outcome.
    #[tokio::test]
    async fn a_failed_early_refill_is_left_to_the_caller_that_finds_the_block_spent() {
        /// The first reservation succeeds, every later one fails.
        struct FailsAfterFirst(AtomicU64);
        impl Reserver for FailsAfterFirst {
            async fn reserve(&self, _: u64, _: &Tally) -> Result<i64, Error> {
                match self.0.fetch_add(1, Ordering::SeqCst) {
                    0 => Ok(1),
                    _ => Err(interrupted()),
                }
            }
            fn interrupted(&self) -> Error {
                interrupted()
            }
        }
        let counter = Arc::new(FailsAfterFirst(AtomicU64::new(0)));
        let allocator = Arc::new(Allocator::new(4).refilled_early());
        let settled = |calls| {
            let (counter, allocator) = (counter.clone(), allocator.clone());
            move || {
                counter.0.load(Ordering::SeqCst) == calls
                    && !allocator.refill.load(Ordering::SeqCst)
            }
        };
        let take = || async {
            allocator
                .allocate_one(|| counter.clone())
                .await
                .unwrap()
                .ids
        };
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(take().await);
        }
        // The third left one id: a refill, which failed.
        until("the first failed refill", settled(2)).await;
        ids.push(take().await);
        until("the second failed refill", settled(3)).await;
        assert_eq!(
            ids,
            [1, 2, 3, 4],
            "the live block handed out whole, in order"
        );
        assert_eq!(allocator.unused(), 0, "nothing added by a failed refill");
        let fifth = allocator.allocate_one(|| counter.clone()).await;
        assert_eq!(
            fifth.unwrap_err().to_string(),
            interrupted().to_string(),
            "the caller that found the block spent reserved, and was told"
        );
    }
}
