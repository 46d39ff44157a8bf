//! How long a call retries after losing a race to another writer (the optimistic loop's
//! ids, an append's mark), and how it spreads its retries: a [`Budget`] (a time, and an
//! optional count of attempts) and the [`Tries`] of one call, which wait between attempts
//! for a time learned from what the loop saw.
//!
//! Why a time and not a count: under contention, how many attempts an insert needs
//! depends on how many writers race for the next id, which the caller cannot know; how
//! long a request may wait, it can. The tutorial's own loop never gives up.
//!
//! Why the wait is learned: writers that lost the same id and come back at the same
//! moment collide again. Each loser waits a random time ("full jitter") in a window of
//! `2 × attempt × max(others per attempt, losses)`: *attempt* is how long this loop's
//! last attempt took (the maximum read and the insert, on this server, under this load),
//! so the window is in the server's own time rather than a constant; *others per
//! attempt* is how many ids other writers store in that time, learned from the ids that
//! went by between this loop's two last reads of the maximum and the time between them
//! (a rate, not a count: ids that go by while the loop waits must not make it wait
//! longer still, or a writer that never waits, such as the tutorial's loop, would starve
//! it); *losses*, the attempts lost in a row (counted up to 8), widen the window while
//! the race goes on without ids going by faster (writers of one pace in lockstep, a
//! lagging read). Linear rather than exponential in the losses: doubling on one's own
//! losses makes the unlucky wait ever longer while the lucky come straight back. Waiting
//! never goes past the budget, nor 500 ms, and a call's waits never add up to more than
//! its attempts: a writer that never waits takes ids at its pace however long this one
//! waits, and a loop that waited 16 attempts' time per try lost to it until its budget
//! was spent (BENCHMARKS.md: one bare writer beside the tutorial's loop on nx-27017,
//! p99 8.9 s and failures, against 0.18 s and none with the cap). BENCHMARKS.md measures
//! it against the loop that waited `rand(0 ..= min(100 ms, 1 ms × 2^attempt))`.

use std::time::Duration;

use tokio::time::Instant;

use crate::base::error::{Error, ErrorKind};
use crate::schema::item::ItemsField;
use crate::schema::sequence::Sequence;

/// The longest window a retry waits in, however long the race: a writer that lost many
/// times still comes back within it.
const MAX_WINDOW: Duration = Duration::from_millis(500);

/// The shortest attempt the window is computed from: an answer faster than this (a local
/// server at rest) still leaves room for the writers to spread.
const MIN_ATTEMPT: Duration = Duration::from_micros(200);

/// The bounds of one call's retries: it gives up once `time` has passed since its first
/// attempt, or after `max_attempts` attempts when set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    pub max_attempts: Option<u32>,
    pub time: Duration,
}

impl Budget {
    /// One attempt: what every strategy but the optimistic one makes.
    pub(crate) const ONCE: Budget = Budget {
        max_attempts: Some(1),
        time: Duration::MAX,
    };

    /// How long an append keeps trying while other writers move its array's mark first.
    pub(crate) const APPEND: Budget = Budget {
        max_attempts: None,
        time: Duration::from_secs(60),
    };
}

/// The attempts of one call: when it started, how many it made, and what it learned.
pub(crate) struct Tries {
    budget: Budget,
    started: Instant,
    made: u32,
    /// When the current attempt started.
    attempt_started: Instant,
    /// How long the last finished attempt took.
    attempt: Duration,
    /// Attempts lost in a row.
    losses: u32,
    /// The time spent in attempts so far, and in waits: the waits never add up to more
    /// than the attempts (see [`Tries::wait`]).
    attempting: Duration,
    waited: Duration,
    /// How many ids other writers store in the time of one attempt, from the last two
    /// reads.
    others: u64,
    /// The first candidate of the last read and when it was read, to learn `others` at
    /// the next.
    last_read: Option<(i64, Instant)>,
}

impl Tries {
    /// The tries of a call bounded by `budget`, starting now.
    pub(crate) fn start(budget: Budget) -> Self {
        let now = Instant::now();
        Tries {
            budget,
            started: now,
            made: 0,
            attempt_started: now,
            attempt: Duration::ZERO,
            losses: 0,
            attempting: Duration::ZERO,
            waited: Duration::ZERO,
            others: 0,
            last_read: None,
        }
    }

    /// Makes room for the next attempt: none before the first, a learned wait before the
    /// others. `false` once the budget is spent: the call gives up.
    pub(crate) async fn next(&mut self) -> bool {
        if self.made > 0 {
            if self.count_reached() || self.started.elapsed() >= self.budget.time {
                return false;
            }
            let wait = (self.budget.time.saturating_sub(self.started.elapsed())).min(self.wait());
            self.waited += wait;
            tokio::time::sleep(wait).await;
            if self.started.elapsed() >= self.budget.time {
                return false;
            }
        }
        self.made += 1;
        self.attempt_started = Instant::now();
        true
    }

    /// Whether the call made its `max_attempts`, if it has a count.
    fn count_reached(&self) -> bool {
        self.budget.max_attempts.is_some_and(|max| self.made >= max)
    }

    /// Learns from a read of the maximum whose first candidate is `candidate`: the ids
    /// other writers stored since the last read are the distance between the two reads'
    /// candidates (the id this loop lost there among them), over the time between them.
    pub(crate) fn read(&mut self, candidate: i64) {
        let now = Instant::now();
        if let Some((last, at)) = self.last_read {
            let gone_by = u64::try_from(candidate.saturating_sub(last)).unwrap_or(0);
            self.others = per_attempt(gone_by, now.duration_since(at), self.attempt);
        }
        self.last_read = Some((candidate, now));
    }

    /// The attempt just made lost its id (or, for many documents, some of them).
    pub(crate) fn lost(&mut self) {
        self.attempt = self.attempt_started.elapsed();
        self.attempting += self.attempt;
        self.losses += 1;
    }

    /// How long to wait before the next attempt: uniform in the learned window, but never
    /// so long that the call's waits would add up to more than its attempts. Waiting
    /// spreads writers that all wait; a writer that never waits (the tutorial's loop, a
    /// service in another language) takes ids at the same pace however long this one
    /// waits, so against it a wait only lowers this call's chances. Attempting at least
    /// half the time keeps the call in the race against such a writer, and still spreads
    /// those that wait.
    fn wait(&self) -> Duration {
        let window = window(self.attempt, self.losses, self.others);
        let credit = self.attempting.saturating_sub(self.waited);
        rand::random_range(Duration::ZERO..=window).min(credit)
    }

    /// How long the call may wait for its turn in its process (`state::turns`): half what
    /// is left of its budget, the other half for its own attempt.
    pub(crate) fn patience(&self) -> Duration {
        self.budget.time.saturating_sub(self.elapsed()) / 2
    }

    /// How long since the first attempt.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The attempts made so far.
    pub(crate) fn made(&self) -> u32 {
        self.made
    }

    /// The error of a call that gave up, its last candidate `last_id` (of the array
    /// `items`, for an append).
    pub(crate) fn exhausted(
        &self,
        seq: &'static Sequence,
        items: Option<&'static ItemsField>,
        last_id: i64,
    ) -> Error {
        Error::new(
            seq,
            ErrorKind::RetriesExhausted {
                items,
                attempts: self.made,
                elapsed: self.elapsed(),
                time_budget: (!self.count_reached()).then_some(self.budget.time),
                last_id,
            },
        )
    }
}

/// How many of `gone_by` ids, stored by others in `between`, they store in the time of
/// one `attempt` (rounded up).
fn per_attempt(gone_by: u64, between: Duration, attempt: Duration) -> u64 {
    if between.is_zero() {
        return gone_by;
    }
    let rate = gone_by as f64 * attempt.max(MIN_ATTEMPT).as_secs_f64() / between.as_secs_f64();
    rate.ceil() as u64
}

/// The window a retry waits in, after an attempt that took `attempt` and `losses` lost
/// attempts in a row, `others` ids stored by others in the time of one attempt.
fn window(attempt: Duration, losses: u32, others: u64) -> Duration {
    let racing = others.max(u64::from(losses.min(MAX_LOSSES))).max(1);
    let spread = racing.saturating_mul(2).min(u64::from(u32::MAX)) as u32;
    let window = attempt.max(MIN_ATTEMPT).saturating_mul(spread);
    window.min(MAX_WINDOW)
}

/// Lost attempts in a row count up to this many writers racing: more losses while no id
/// goes by say nothing more of how many race.
const MAX_LOSSES: u32 = 8;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::sequence::construct::optimistic;
    use crate::schema::sequence::testing::on_id;

    /// The sequence the errors name (the bounds come from each test's `Budget`).
    const SEQ: Sequence = on_id("budget", "budget", optimistic(None, None));

    /// The window spans two attempts per writer racing: the ids others store per attempt,
    /// or the losses in a row (at most 8); within its bound.
    #[test]
    fn the_window_spans_the_writers_racing() {
        let ms = Duration::from_millis;
        assert_eq!(window(ms(2), 1, 1), ms(4));
        assert_eq!(window(ms(2), 1, 15), ms(60));
        assert_eq!(window(ms(2), 3, 0), ms(12));
        assert_eq!(window(ms(2), 40, 0), ms(32));
        assert_eq!(window(ms(2), 1, 1_000), MAX_WINDOW);
        assert_eq!(window(Duration::ZERO, 1, 1), MIN_ATTEMPT * 2);
    }

    /// What others store per attempt is the ids between two reads' first candidates,
    /// over the time between the reads: ids that go by while the loop waits do not count
    /// as writers racing it.
    #[tokio::test(start_paused = true)]
    async fn others_per_attempt_are_a_rate_of_the_ids_gone_by() {
        let ms = Duration::from_millis;
        let mut tries = Tries::start(Budget {
            max_attempts: None,
            time: Duration::from_secs(1),
        });
        tries.attempt = ms(2);
        tries.read(10);
        assert_eq!(tries.others, 0);
        // 5 ids in 2 ms: 5 others per attempt of 2 ms.
        tokio::time::sleep(ms(2)).await;
        tries.read(15);
        assert_eq!(tries.others, 5);
        // 40 ids in 80 ms: one per attempt.
        tokio::time::sleep(ms(80)).await;
        tries.read(55);
        assert_eq!(tries.others, 1);
        assert_eq!(per_attempt(3, Duration::ZERO, ms(2)), 3);
    }

    /// With a fake clock: a loop that loses every time gives up once its time is spent,
    /// not before, having waited between its attempts; the error says how long and how
    /// many.
    #[tokio::test(start_paused = true)]
    async fn a_loop_that_always_loses_gives_up_when_its_time_is_spent() {
        let budget = Budget {
            max_attempts: None,
            time: Duration::from_secs(2),
        };
        let mut tries = Tries::start(budget);
        let started = Instant::now();
        let mut attempts = 0;
        while tries.next().await {
            attempts += 1;
            // Each attempt takes 3 ms of the server's time, and loses.
            tokio::time::sleep(Duration::from_millis(3)).await;
            tries.lost();
        }
        let elapsed = started.elapsed();
        assert!(elapsed >= budget.time, "gave up early: {elapsed:?}");
        assert!(
            elapsed < budget.time + Duration::from_millis(10),
            "{elapsed:?}"
        );
        // Fewer attempts than 3 ms each would allow: the loser waits (in a window of up
        // to 16 × 3 ms once 8 are lost in a row with no id going by); but its waits add
        // up to no more than its attempts, so it makes about one attempt per 6 ms (the last cut short).
        assert!(tries.waited > Duration::ZERO);
        assert!(tries.waited <= tries.attempting);
        assert!(
            attempts > 2000 / 6 * 9 / 10 && attempts < 2000 / 3 * 3 / 4,
            "{attempts} attempts"
        );
        assert_eq!(tries.made(), attempts);
        match tries.exhausted(&SEQ, None, 41).into_kind() {
            ErrorKind::RetriesExhausted {
                attempts: made,
                elapsed: told,
                time_budget,
                last_id: 41,
                ..
            } => {
                assert_eq!(
                    (made, told, time_budget),
                    (attempts, elapsed, Some(budget.time))
                );
            }
            other => panic!("{other:?}"),
        }
    }

    /// A count of attempts, when set, ends the loop first, and the error says so.
    #[tokio::test(start_paused = true)]
    async fn a_count_of_attempts_ends_the_loop_before_the_time() {
        let mut tries = Tries::start(Budget {
            max_attempts: Some(3),
            time: Duration::from_secs(2),
        });
        let mut attempts = 0;
        while tries.next().await {
            attempts += 1;
            tries.lost();
        }
        assert_eq!(attempts, 3);
        let error = tries.exhausted(&SEQ, None, 7);
        assert!(
            matches!(
                error.kind(),
                ErrorKind::RetriesExhausted {
                    attempts: 3,
                    time_budget: None,
                    ..
                }
            ),
            "{error:?}"
        );
    }
}
