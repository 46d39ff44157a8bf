//! Waiting before a retry of the counter's upsert after a race of first use, so that the
//! writers that collided spread out. (The optimistic loop's waits are learned: `retry`.)

use std::time::Duration;

/// Backoff between attempts: random in `0 ..= min(MAX, BASE * 2^attempt)` ("full jitter").
const BACKOFF_BASE: Duration = Duration::from_millis(1);
const BACKOFF_MAX: Duration = Duration::from_millis(100);

/// Waits before attempt `attempt` (2, 3, ...).
pub(crate) async fn backoff(attempt: u32) {
    let cap = BACKOFF_BASE
        .saturating_mul(1 << attempt.min(16))
        .min(BACKOFF_MAX);
    let wait = rand::random_range(Duration::ZERO..=cap);
    tokio::time::sleep(wait).await;
}
