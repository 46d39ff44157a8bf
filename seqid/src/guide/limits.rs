//! Limits worth knowing.
//!
//! - Make a [`Sequences`](crate::Sequences) handle from each client, not one `mongodb::Database`
//!   from another client's handle: a handle's state is its client's deployment's.
//! - Resetting or deleting a counter while processes hold blocks of it makes those blocks collide
//!   with the new ids (as with every block allocator); the `_id` index turns that into
//!   [`ErrorKind::DuplicateKey`](crate::error::ErrorKind::DuplicateKey), not duplicates.
//! - On a sharded cluster, what holds and what is refused is the
//!   [sharded clusters](super::sharded_clusters) chapter's matrix; leave the counters collection
//!   unsharded (it is small), or shard it on the fields that find a counter.
//! - The `gapless` strategy serves one writer at a time per sequence: throughput is one
//!   transaction's length per id, and `n` concurrent writers each wait about `n` of them (see
//!   [strategies](super::strategies#gapless)). Keep a gapless transaction short: work done in
//!   it after the insert holds every other writer of the sequence.
//! - The `optimistic` strategy pays for races between processes: every lost race costs an insert
//!   and a share of a maximum query (see [strategies](super::strategies#optimistic)).
//! - A counter holding a fraction, a string, or a Double the ids would take to 2^53 is never
//!   moved ([`ErrorKind::CounterNotNumeric`](crate::error::ErrorKind::CounterNotNumeric)); one without `seq`,
//!   or an Int64 beyond 2^53, is updated on condition that it still holds what was read, two round
//!   trips more (see [strategies](super::strategies#counters)).
//! - seqid is written for MongoDB 6–8. The servers the repository's tests run on differ from it
//!   in places (see [the test server](super::test_server)); the tests work around those
//!   differences, the library does not.
//! - What the guarantees rest on, and the risk that remains: see
//!   [guarantees](super::guarantees#the-risk-that-remains).
