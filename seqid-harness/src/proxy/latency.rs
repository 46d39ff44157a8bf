//! The delay a [`FaultProxy`] adds to every message it relays, each way, as a far
//! network does: a database in another zone or region, on a loopback test server.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::FaultProxy;

/// Which way a message goes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Way {
    /// A request, from the client to the server.
    ToServer,
    /// A reply, from the server (or the proxy's own answer) to the client.
    ToClient,
}

/// The added delay of each way, in nanoseconds; 0 relays at once.
#[derive(Default)]
pub(super) struct Latency {
    to_server: AtomicU64,
    to_client: AtomicU64,
}

impl Latency {
    fn of(&self, way: Way) -> &AtomicU64 {
        match way {
            Way::ToServer => &self.to_server,
            Way::ToClient => &self.to_client,
        }
    }

    /// Waits until the message read at `read_at` is due on the other side: `read_at` plus
    /// the way's delay. Returns at once, with no timer, when the way has none.
    ///
    /// Each connection relays one message at a time, so a message read while the one
    /// before it waits is read late by that much: the driver sends one request at a time
    /// per connection, and a server streams its replies (`moreToCome`) seconds apart, so
    /// no message of theirs queues behind another.
    pub(super) async fn hold(&self, way: Way, read_at: Instant) {
        let nanos = self.of(way).load(Ordering::Relaxed);
        if nanos > 0 {
            tokio::time::sleep_until(read_at + Duration::from_nanos(nanos)).await;
        }
    }
}

/// Clamps a delay to what the counters hold (584 years).
fn nanos(delay: Duration) -> u64 {
    u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX)
}

impl FaultProxy {
    /// Delays every message from now on: each request by `to_server` before it is sent
    /// on, each reply by `to_client` before it reaches the client, counted from when the
    /// proxy read it; a round trip through the proxy takes their sum longer. The proxy's
    /// own answers (`config.collections` as a mongos) wait both. `Duration::ZERO` both
    /// ways (the default) relays at once.
    ///
    /// tokio's timer has a resolution of a millisecond, so a delay is rounded up to the
    /// next one: measure the round trip it makes (a `ping`) rather than assume it.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// let proxy = seqid_harness::FaultProxy::for_server().await?;
    /// // A database 5 ms away, the whole of it on the request's way.
    /// proxy.set_latency(Duration::from_millis(5), Duration::ZERO);
    /// assert_eq!(proxy.latency(), (Duration::from_millis(5), Duration::ZERO));
    /// # Ok(()) }
    /// ```
    pub fn set_latency(&self, to_server: Duration, to_client: Duration) {
        let latency = &self.shared.latency;
        latency.to_server.store(nanos(to_server), Ordering::Relaxed);
        latency.to_client.store(nanos(to_client), Ordering::Relaxed);
    }

    /// The delays of [`set_latency`](FaultProxy::set_latency): `(to_server, to_client)`.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// let (to_server, to_client) = proxy.latency();
    /// println!("a round trip adds {:?}", to_server + to_client);
    /// # }
    /// ```
    pub fn latency(&self) -> (Duration, Duration) {
        let latency = &self.shared.latency;
        let get = |way| Duration::from_nanos(latency.of(way).load(Ordering::Relaxed));
        (get(Way::ToServer), get(Way::ToClient))
    }
}
