//! The handle's registry: the state this process keeps for the sequences of one
//! deployment (the allocators that share round trips and blocks between tasks, the
//! optimistic loop's frontiers, the indexes found, the writes left running by cancelled
//! callers), by database and key, released when unused for a while. A
//! [`Sequences`](crate::Sequences) handle is a thin, cloneable handle over one, as sqlx's
//! `Pool` is over its inner state.
//!
//! [`Route`] is where one call goes: its database, and the registry whose state it shares
//! (none through a bare `mongodb::Database`, which gets state made for the call).

use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mongodb::Collection;
use mongodb::bson::RawDocumentBuf;

use crate::base::lock;
use crate::counter::reserved::Origin;
use crate::deployment::known::Known;
use crate::fields::scope::{Key, Scope};
use crate::optimistic::frontier::Frontier;
use crate::schema::sequence::{Sequence, Strategy};
use crate::state::allocator::Allocator;
use crate::state::orphan::Orphan;

/// How long a sequence's state is kept once no call uses it, unless the handle's
/// `release_idle_after` says otherwise (`Sequences::DEFAULT_RELEASE_AFTER`).
pub(crate) const DEFAULT_RELEASE_AFTER: Duration = Duration::from_secs(600);

/// Entries are swept when there are more than this many, and then when their number has
/// doubled since the last sweep: memory stays within twice what is in use, plus this.
const SWEEP_FLOOR: usize = 64;

/// The state of one handle (and its clones), by database name and key.
pub(crate) struct Registry {
    counters: Entries<CounterKey, Allocator>,
    frontiers: Entries<FieldKey<Scope>, Frontier>,
    /// The unique indexes found on a sequence's field, so that they are checked once.
    indexes: Entries<IndexKey, ()>,
    /// Writes whose caller went away before their answer came, for `resume_insert`.
    orphans: Entries<FieldKey<Key>, Mutex<Vec<Orphan>>>,
    /// Milliseconds an entry stays unused before it is released.
    release_after: AtomicU64,
    /// What was read of the deployment: its kind, and how its collections are sharded.
    deployment: Known,
    /// Which handle this is, unique in the process: a reserved id records it, so that an
    /// insert through another handle (another deployment, as far as seqid can tell)
    /// refuses it.
    id: u64,
}

impl Registry {
    pub(crate) fn new() -> Self {
        Registry {
            counters: Entries::new(),
            frontiers: Entries::new(),
            indexes: Entries::new(),
            orphans: Entries::new(),
            release_after: AtomicU64::new(DEFAULT_RELEASE_AFTER.as_millis() as u64),
            deployment: Known::default(),
            id: {
                static NEXT: AtomicU64 = AtomicU64::new(1);
                NEXT.fetch_add(1, Ordering::Relaxed)
            },
        }
    }

    /// Which handle this is (and its clones), unique in the process.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// What the handle has read of its deployment.
    pub(crate) fn deployment(&self) -> &Known {
        &self.deployment
    }

    /// Releases an entry once no call has used it for `idle`.
    pub(crate) fn release_idle_after(&self, idle: Duration) {
        let millis = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        self.release_after.store(millis, Ordering::Relaxed);
    }

    pub(crate) fn release_after(&self) -> Duration {
        Duration::from_millis(self.release_after.load(Ordering::Relaxed))
    }

    /// How many counters' allocators and optimistic frontiers are held.
    pub(crate) fn held(&self) -> usize {
        self.counters.len() + self.frontiers.len()
    }

    /// The allocator of the counter document of `scope` of the sequence in `db` (counters
    /// and block).
    pub(crate) fn counter(&self, db: &str, seq: &Sequence, scope: &Scope) -> Arc<Allocator> {
        let key = CounterKey::of(seq, scope);
        let (chunk, early) = (key.chunk, key.early);
        let make = || match early {
            true => Allocator::new(chunk).refilled_early(),
            false => Allocator::new(chunk),
        };
        self.counters
            .get_or_insert(db, key, self.release_after(), make)
    }

    /// How many ids the allocator of the counter of `scope` holds, and the next it hands
    /// out; `(0, None)` when there is no allocator (nothing is made to answer).
    pub(crate) fn ids_held(&self, db: &str, seq: &Sequence, scope: &Scope) -> (u64, Option<i64>) {
        self.counters
            .get(db, &CounterKey::of(seq, scope))
            .map_or((0, None), |allocator| allocator.held())
    }

    /// The optimistic loop's frontier for `scope` of the sequence's field in `db`.
    pub(crate) fn frontier(&self, db: &str, seq: &Sequence, scope: &Scope) -> Arc<Frontier> {
        let idle = self.release_after();
        self.frontiers
            .get_or_insert(db, FieldKey::of(seq, scope), idle, Frontier::new)
    }

    /// Whether the unique index the sequence relies on was found in `db` already.
    pub(crate) fn index_found(&self, db: &str, seq: &Sequence) -> bool {
        self.indexes.get(db, &IndexKey::of(seq)).is_some()
    }

    /// Records that the unique index the sequence relies on exists in `db`.
    pub(crate) fn found_index(&self, db: &str, seq: &Sequence) {
        self.keep_index(db, IndexKey::of(seq));
    }

    /// Whether a unique index keeping the natural key `fields` of `collection` unique
    /// was found in `db` already.
    pub(crate) fn key_index_found(
        &self,
        db: &str,
        collection: &'static str,
        fields: &'static [&'static str],
    ) -> bool {
        let key = IndexKey::natural(collection, fields);
        self.indexes.get(db, &key).is_some()
    }

    /// Records that a unique index keeping the natural key `fields` unique exists.
    pub(crate) fn found_key_index(
        &self,
        db: &str,
        collection: &'static str,
        fields: &'static [&'static str],
    ) {
        self.keep_index(db, IndexKey::natural(collection, fields));
    }

    fn keep_index(&self, db: &str, index: IndexKey) {
        self.indexes
            .get_or_insert(db, index, self.release_after(), || ());
    }

    /// Keeps the write of the document at `key` whose caller went away before its answer
    /// came (see [`crate::call::pending`]), until `resume_insert` asks or it is released.
    pub(crate) fn orphaned(&self, db: &str, seq: &Sequence, key: &Key, orphan: Orphan) {
        let idle = self.release_after();
        let orphans = self
            .orphans
            .get_or_insert(db, FieldKey::of(seq, key), idle, Mutex::default);
        lock(&orphans).push(orphan);
    }

    /// Takes the write of the document at `key` with `fingerprint` whose caller went
    /// away, if one is kept.
    pub(crate) fn take_orphan(
        &self,
        db: &str,
        seq: &Sequence,
        key: &Key,
        fingerprint: u64,
    ) -> Option<Orphan> {
        let orphans = self.orphans.get(db, &FieldKey::of(seq, key))?;
        let mut orphans = lock(&orphans);
        let index = orphans.iter().position(|o| o.fingerprint == fingerprint)?;
        // An entry left empty is released with the idle ones.
        Some(orphans.swap_remove(index))
    }

    /// What the handle did for the sequence in `db`: for a scoped sequence, summed over
    /// the scopes it holds.
    pub(crate) fn stats(&self, db: &str, seq: &Sequence) -> Stats {
        let mut stats = Stats::default();
        match seq.strategy {
            Strategy::Optimistic { .. } => {
                self.frontiers.each(db, |key, frontier| {
                    if (key.collection, key.field) == (seq.collection, seq.field) {
                        stats.add(Stats {
                            in_flight: frontier.in_flight(),
                            ..Stats::of(&frontier.allocator)
                        });
                    }
                });
            }
            _ => {
                let of = CounterKey::of(seq, &Scope::NONE);
                self.counters.each(db, |key, allocator| {
                    if (key.counters, key.sequence, key.chunk)
                        == (of.counters, of.sequence, of.chunk)
                    {
                        stats.add(Stats::of(allocator));
                    }
                });
            }
        }
        stats
    }
}

/// The target collections of a handle's database, each made once: a collection made per
/// insert copies its name and the database's options (two allocations), a cost the block
/// strategy's in-memory handout would otherwise carry on every insert (BENCHMARKS.md,
/// *The client's own cost*).
#[derive(Default)]
pub(crate) struct Collections(Mutex<foldhash::HashMap<&'static str, Collection<RawDocumentBuf>>>);

impl Collections {
    /// The collection `name` of `db`, which is the database these collections belong to.
    pub(crate) fn get(
        &self,
        db: &mongodb::Database,
        name: &'static str,
    ) -> Collection<RawDocumentBuf> {
        lock(&self.0)
            .entry(name)
            .or_insert_with(|| db.collection(name))
            .clone()
    }
}

impl std::fmt::Debug for Collections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collections").finish_non_exhaustive()
    }
}

/// Where one call goes, and the registry whose state it shares, if any.
///
/// `pub` only so that the sealed [`AsDatabase`](crate::AsDatabase) can name it: this
/// module is private, and the type is not part of the public API.
#[derive(Clone, Copy)]
pub struct Route<'a> {
    pub(crate) db: &'a mongodb::Database,
    pub(crate) registry: Option<&'a Registry>,
    /// The collections made once for `db` (a handle's database keeps them).
    pub(crate) collections: Option<&'a Collections>,
}

impl<'a> Route<'a> {
    /// A call through a bare database: state made for the call alone.
    pub(crate) fn bare(db: &'a mongodb::Database) -> Self {
        Route {
            db,
            registry: None,
            collections: None,
        }
    }

    /// The allocator of the counter of `scope`: the registry's, or one made for the call.
    pub(crate) fn counter(&self, seq: &Sequence, scope: &Scope) -> Arc<Allocator> {
        match self.registry {
            Some(registry) => registry.counter(self.db.name(), seq, scope),
            // Exactly what this call asks: nothing is kept for a later call.
            None => Arc::new(Allocator::new(1)),
        }
    }

    /// What is known of the deployment the call goes to: its handle's, or, for a bare
    /// database, the process's.
    pub(crate) fn known(&self) -> &'a Known {
        match self.registry {
            Some(registry) => registry.deployment(),
            None => Known::of_process(),
        }
    }

    /// Where a reserved id is taken or inserted: the database's name, and the handle's
    /// registry (none through a bare database, which the driver gives no identity).
    pub(crate) fn origin(&self) -> Origin {
        Origin {
            db: self.db.name().into(),
            handle: self.registry.map(Registry::id),
        }
    }

    /// The optimistic frontier of `scope`: the registry's, or one made for the call.
    pub(crate) fn frontier(&self, seq: &Sequence, scope: &Scope) -> Arc<Frontier> {
        match self.registry {
            Some(registry) => registry.frontier(self.db.name(), seq, scope),
            None => Arc::new(Frontier::for_one_call()),
        }
    }
}

/// What this process has done for one sequence in one database, from
/// [`Document::stats`](crate::SequenceOf::stats).
///
/// ```
/// let stats = seqid::Stats::default();
/// assert_eq!(stats.reservations, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Round trips that reserved ids: `$inc` on the counter, or (optimistic) queries for
    /// the largest `_id`.
    pub reservations: u64,
    /// Ids handed out to inserts.
    pub ids: u64,
    /// Retries: duplicate `_id`s met by the optimistic loop, and counter upserts that
    /// raced with another first use of the sequence.
    pub retries: u64,
    /// Ids reserved and not handed out yet: what is left of the block (block strategy),
    /// and with `counters` too the ids of callers cancelled while their reservation was
    /// on its way, which the next callers take first.
    pub unused: u64,
    /// Optimistic candidates handed out whose insert has not finished. Zero once the
    /// process is quiet, cancelled inserts included.
    pub in_flight: u64,
    /// [`find_or_insert`](crate::Document::find_or_insert) calls that took an id and
    /// found, when they wrote, that another caller had just stored a document with their
    /// natural key. What each cost is the strategy's: a gap with `counters`; none with
    /// `block` (the id goes back to the live block), `optimistic` or `gapless`.
    pub races_lost: u64,
}

impl Stats {
    fn add(&mut self, other: Stats) {
        self.reservations += other.reservations;
        self.ids += other.ids;
        self.retries += other.retries;
        self.unused += other.unused;
        self.in_flight += other.in_flight;
        self.races_lost += other.races_lost;
    }

    fn of(allocator: &Allocator) -> Self {
        let tally = &allocator.tally;
        Stats {
            reservations: tally.reservations.load(Ordering::Relaxed),
            ids: tally.ids.load(Ordering::Relaxed),
            retries: tally.retries.load(Ordering::Relaxed),
            unused: allocator.unused(),
            in_flight: 0,
            races_lost: tally.races_lost.load(Ordering::Relaxed),
        }
    }
}

/// A counter document (of a scope), and how many ids one round trip reserves at least.
#[derive(Clone, PartialEq, Eq, Hash)]
struct CounterKey {
    counters: &'static str,
    sequence: &'static str,
    chunk: u64,
    /// Whether the next block is reserved early (the block strategy's default).
    early: bool,
    scope: Scope,
}

impl CounterKey {
    fn of(seq: &Sequence, scope: &Scope) -> Self {
        CounterKey {
            counters: seq.counters,
            sequence: seq.name,
            chunk: match seq.strategy {
                Strategy::Block { block_size, .. } => block_size.into(),
                _ => 1,
            },
            early: matches!(seq.strategy, Strategy::Block { prefetch: true, .. }),
            scope: scope.clone(),
        }
    }
}

/// A field of a target collection, at `At`: a [`Scope`] of it (served by the optimistic
/// loop), or a document's [`Key`] (its scope and number in the field: its place).
#[derive(Clone, PartialEq, Eq, Hash)]
struct FieldKey<At> {
    collection: &'static str,
    field: &'static str,
    at: At,
}

impl<At: Clone> FieldKey<At> {
    fn of(seq: &Sequence, at: &At) -> Self {
        FieldKey {
            collection: seq.collection,
            field: seq.field,
            at: at.clone(),
        }
    }
}

/// The unique index on a sequence's field and scope fields.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct IndexKey {
    collection: &'static str,
    /// The field a sequence fills, or [`NATURAL_KEY`] for a natural key's index.
    field: &'static str,
    /// The scope fields before it, or the natural key's fields.
    scope: &'static [&'static str],
}

/// The `field` of an [`IndexKey`] for a natural key's index: no field name (a field
/// cannot start with `$`), so it never meets a sequence's.
const NATURAL_KEY: &str = "$natural key";

impl IndexKey {
    fn of(seq: &Sequence) -> Self {
        IndexKey {
            collection: seq.collection,
            field: seq.field,
            scope: seq.scope,
        }
    }

    /// The unique index on a natural key, `fields`, in `collection`.
    fn natural(collection: &'static str, fields: &'static [&'static str]) -> Self {
        IndexKey {
            collection,
            field: NATURAL_KEY,
            scope: fields,
        }
    }
}

/// Entries by database name, then by a key of `'static` parts (a lookup borrows the name
/// and allocates nothing), released when unused for a while.
///
/// Every update below leaves the map whole, so a poisoned lock is still sound.
struct Entries<K, V>(Mutex<Map<K, V>>);

struct Map<K, V> {
    /// foldhash, not SipHash: these are looked up on every insert, where SipHash was a
    /// visible share of what a block insert adds to the driver's own work (BENCHMARKS.md,
    /// *The client's own cost*). Scope values may come from an application's users;
    /// foldhash's seeds are random per process and per map, so they cannot choose
    /// colliding keys without reverse-engineering the running process.
    by_database: foldhash::HashMap<String, foldhash::HashMap<K, Entry<V>>>,
    len: usize,
    /// The next sweep runs once `len` exceeds this.
    sweep_above: usize,
}

struct Entry<V> {
    value: Arc<V>,
    used: Instant,
}

impl<K: Eq + Hash, V> Entries<K, V> {
    fn new() -> Self {
        Entries(Mutex::new(Map {
            by_database: foldhash::HashMap::default(),
            len: 0,
            sweep_above: SWEEP_FLOOR,
        }))
    }

    fn get_or_insert(&self, db: &str, key: K, idle: Duration, make: impl FnOnce() -> V) -> Arc<V> {
        let now = Instant::now();
        let mut map = lock(&self.0);
        if let Some(entry) = map.by_database.get_mut(db).and_then(|e| e.get_mut(&key)) {
            entry.used = now;
            return entry.value.clone();
        }
        if map.len >= map.sweep_above {
            map.sweep(now, idle);
        }
        let value = Arc::new(make());
        map.by_database.entry(db.to_owned()).or_default().insert(
            key,
            Entry {
                value: value.clone(),
                used: now,
            },
        );
        map.len += 1;
        value
    }

    fn get(&self, db: &str, key: &K) -> Option<Arc<V>> {
        let map = lock(&self.0);
        Some(map.by_database.get(db)?.get(key)?.value.clone())
    }

    /// Calls `visit` with every entry of `db`, under the lock: keep it short.
    fn each(&self, db: &str, mut visit: impl FnMut(&K, &V)) {
        let map = lock(&self.0);
        for (key, entry) in map.by_database.get(db).into_iter().flatten() {
            visit(key, &entry.value);
        }
    }

    fn len(&self) -> usize {
        lock(&self.0).len
    }
}

impl<K, V> Map<K, V> {
    /// Releases the entries no call holds that were last used `idle` ago or earlier.
    fn sweep(&mut self, now: Instant, idle: Duration) {
        let mut len = 0;
        self.by_database.retain(|_, entries| {
            entries.retain(|_, entry| {
                Arc::strong_count(&entry.value) > 1 || now.duration_since(entry.used) < idle
            });
            len += entries.len();
            !entries.is_empty()
        });
        self.len = len;
        self.sweep_above = (2 * len).max(SWEEP_FLOOR);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_entries_are_released_and_held_ones_kept() {
        let entries: Entries<u32, u32> = Entries::new();
        let held = entries.get_or_insert("db0", 0, Duration::ZERO, || 0);
        for n in 1..100_000_u32 {
            let name = format!("db{n}");
            let value = entries.get_or_insert(&name, n, Duration::ZERO, || n);
            assert_eq!(*value, n);
        }
        let len = entries.len();
        assert!(
            len <= 2 * SWEEP_FLOOR + 1,
            "{len} entries held for 100,000 names used once"
        );
        assert_eq!(
            entries.get("db0", &0).as_deref(),
            Some(&0),
            "an entry a caller holds is never released"
        );
        assert!(Arc::ptr_eq(
            &held,
            &entries.get_or_insert("db0", 0, Duration::ZERO, || 99)
        ));
    }

    /// 100,000 scope values of a block sequence, each used once: the live blocks of
    /// idle scopes are released, so memory follows the scopes in use.
    #[test]
    fn live_blocks_of_100_000_scopes_are_bounded() {
        use mongodb::bson::doc;
        const PER_PROJECT: Sequence = crate::schema::sequence::testing::on_field(
            "ticket",
            "tickets",
            Strategy::Block {
                block_size: 100,
                prefetch: true,
            },
            "number",
            &["project"],
        );
        let sequences = Registry::new();
        sequences.release_idle_after(Duration::ZERO);
        let held = sequences.counter(
            "app",
            &PER_PROJECT,
            &Scope::of(&PER_PROJECT, &doc! { "project": "held" }).unwrap(),
        );
        for n in 0..100_000 {
            let scope = Scope::of(&PER_PROJECT, &doc! { "project": n }).unwrap();
            sequences.counter("app", &PER_PROJECT, &scope);
            assert!(
                sequences.held() <= 2 * SWEEP_FLOOR + 1,
                "{} live blocks held after {n} scopes",
                sequences.held()
            );
        }
        let again = sequences.counter(
            "app",
            &PER_PROJECT,
            &Scope::of(&PER_PROJECT, &doc! { "project": "held" }).unwrap(),
        );
        assert!(
            Arc::ptr_eq(&held, &again),
            "a block in use is never released"
        );
    }

    #[test]
    fn recently_used_entries_survive_a_sweep() {
        let entries: Entries<u32, u32> = Entries::new();
        let hour = Duration::from_secs(3600);
        for n in 0..1000_u32 {
            entries.get_or_insert("db", n, hour, || n);
        }
        assert_eq!(entries.len(), 1000, "nothing idle for an hour yet");
        assert_eq!(entries.get("db", &7).as_deref(), Some(&7));
    }
}
