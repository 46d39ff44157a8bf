//! [`Sequences`]: the state this process keeps for the sequences of one deployment (the
//! allocators that share round trips and blocks between tasks, the optimistic loop's
//! frontier), owned by a cloneable handle, as the driver's `Client` owns its pools.
//!
//! The driver gives a `Client` no identity, so state cannot be found from a bare
//! `mongodb::Database`: two clients to two deployments may use the same database name.
//! Hence the handle, which makes its databases itself ([`Sequences::database`]) and so
//! knows they all reach its own deployment. A bare `mongodb::Database` gets state made
//! for the one call and dropped after it: always correct, never shared.

use std::hash::Hash;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use mongodb::Collection;
use mongodb::bson::RawDocumentBuf;
use mongodb::options::DatabaseOptions;

use crate::allocator::Allocator;
use crate::optimistic::Optimistic;
use crate::pending::Orphan;
use crate::scope::Scope;
use crate::write::Key;
use crate::{Sequence, Strategy};

/// How long a sequence's state is kept once no call uses it, unless
/// [`Sequences::release_idle_after`] says otherwise.
pub const DEFAULT_RELEASE_AFTER: Duration = Duration::from_secs(600);

/// Entries are swept when there are more than this many, and then when their number has
/// doubled since the last sweep: memory stays within twice what is in use, plus this.
const SWEEP_FLOOR: usize = 64;

/// The state this process keeps for the sequences of one deployment. Cheap to clone: the
/// clones share it. Make one per `mongodb::Client` (next to it, where the application
/// keeps its client), and take databases from it:
///
/// ```no_run
/// use seqid::{Document, Sequences};
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("userid", collection = "users", strategy = "block")]
/// # struct User { #[serde(rename = "_id")] id: i64, name: String }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = mongodb::Client::with_uri_str("mongodb://localhost:27017").await?;
/// let sequences = Sequences::new(&client);
/// let db = sequences.database("app");
///
/// // Every task of the process shares the block of ids and the round trips.
/// let mut ada = User { id: 0, name: "Ada".into() };
/// ada.insert(&db).await?;
/// # Ok(()) }
/// ```
///
/// What it shares, by strategy: `counters` tasks waiting together share one `$inc`;
/// `block` tasks take ids from one block in memory; `optimistic` tasks share one query
/// for the largest `_id` and never race each other. Through a bare `mongodb::Database`,
/// each call works alone instead (see [`AsDatabase`]).
///
/// # Memory
///
/// The state of a sequence is released once no call has used it for
/// [`release_idle_after`](Sequences::release_idle_after) (10 minutes unless set), so a
/// service with a database per tenant keeps state for the tenants in use, not for every
/// name ever seen. Releasing costs nothing but for the block strategy, whose unused ids
/// are dropped: a gap of at most one block. Counters and ids already stored are never
/// affected, and [`stats`](crate::Document::stats) count again from zero.
#[derive(Clone)]
pub struct Sequences {
    shared: Arc<Shared>,
}

struct Shared {
    client: mongodb::Client,
    counters: Entries<CounterKey, Allocator>,
    collections: Entries<CollectionKey, Optimistic>,
    /// The unique indexes found on a sequence's field, so that they are checked once.
    indexes: Entries<IndexKey, ()>,
    /// Writes whose caller went away before their answer came, for `resume_insert`.
    orphans: Entries<OrphanKey, Mutex<Vec<Orphan>>>,
    /// Milliseconds an entry stays unused before it is released.
    release_after: AtomicU64,
}

impl Sequences {
    /// A handle for the deployment `client` reaches, holding no state yet.
    ///
    /// ```no_run
    /// # async fn run() -> mongodb::error::Result<()> {
    /// let client = mongodb::Client::with_uri_str("mongodb://localhost:27017").await?;
    /// let sequences = seqid::Sequences::new(&client);
    /// # Ok(()) }
    /// ```
    pub fn new(client: &mongodb::Client) -> Self {
        Sequences {
            shared: Arc::new(Shared {
                client: client.clone(),
                counters: Entries::new(),
                collections: Entries::new(),
                indexes: Entries::new(),
                orphans: Entries::new(),
                release_after: AtomicU64::new(DEFAULT_RELEASE_AFTER.as_millis() as u64),
            }),
        }
    }

    /// Releases a sequence's state once no call has used it for `idle` (for this handle
    /// and its clones). `Duration::ZERO` releases it as soon as no call holds it.
    ///
    /// ```no_run
    /// # async fn run(client: mongodb::Client) {
    /// use std::time::Duration;
    /// let sequences = seqid::Sequences::new(&client).release_idle_after(Duration::from_secs(60));
    /// # }
    /// ```
    pub fn release_idle_after(self, idle: Duration) -> Self {
        let millis = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        self.shared.release_after.store(millis, Ordering::Relaxed);
        self
    }

    /// The database `name` of this handle's deployment, with the client's options.
    ///
    /// ```no_run
    /// # fn run(sequences: seqid::Sequences) {
    /// let db = sequences.database("app");
    /// assert_eq!(db.name(), "app");
    /// # }
    /// ```
    pub fn database(&self, name: &str) -> Database {
        self.bind(self.shared.client.database(name))
    }

    /// The database `name` with its own options (write concern, read preference, ...).
    ///
    /// ```no_run
    /// # fn run(sequences: seqid::Sequences) {
    /// use mongodb::options::{DatabaseOptions, WriteConcern};
    /// let options = DatabaseOptions::builder().write_concern(WriteConcern::majority()).build();
    /// let db = sequences.database_with_options("app", options);
    /// # }
    /// ```
    pub fn database_with_options(&self, name: &str, options: DatabaseOptions) -> Database {
        self.bind(self.shared.client.database_with_options(name, options))
    }

    /// The client this handle was made for.
    ///
    /// ```no_run
    /// # async fn run(sequences: seqid::Sequences) -> mongodb::error::Result<()> {
    /// let mut session = sequences.client().start_session().await?;
    /// # Ok(()) }
    /// ```
    pub fn client(&self) -> &mongodb::Client {
        &self.shared.client
    }

    /// How many sequences (for a scoped sequence, scopes) this handle holds state for: a
    /// counter's allocator (with its live block) or an optimistic state each; those in use, or used within
    /// [`release_idle_after`](Sequences::release_idle_after), give or take what the next
    /// sweep releases.
    ///
    /// ```no_run
    /// # fn run(client: mongodb::Client) {
    /// let sequences = seqid::Sequences::new(&client);
    /// assert_eq!(sequences.held(), 0);
    /// # }
    /// ```
    pub fn held(&self) -> usize {
        self.shared.counters.len() + self.shared.collections.len()
    }

    fn bind(&self, db: mongodb::Database) -> Database {
        Database {
            db,
            sequences: self.clone(),
            collections: Arc::default(),
        }
    }

    fn release_after(&self) -> Duration {
        Duration::from_millis(self.shared.release_after.load(Ordering::Relaxed))
    }

    /// The allocator of the counter document of `scope` of the sequence in `db` (counters
    /// and block).
    pub(crate) fn counter(&self, db: &str, seq: &Sequence, scope: &Scope) -> Arc<Allocator> {
        let key = CounterKey::of(seq, scope);
        let chunk = key.chunk;
        let idle = self.release_after();
        self.shared
            .counters
            .get_or_insert(db, key, idle, || Allocator::new(chunk))
    }

    /// The optimistic loop's state for `scope` of the sequence's field in `db`.
    pub(crate) fn collection(&self, db: &str, seq: &Sequence, scope: &Scope) -> Arc<Optimistic> {
        let idle = self.release_after();
        self.shared.collections.get_or_insert(
            db,
            CollectionKey::of(seq, scope),
            idle,
            Optimistic::new,
        )
    }

    /// Whether the unique index the sequence relies on was found in `db` already.
    pub(crate) fn index_found(&self, db: &str, seq: &Sequence) -> bool {
        self.shared.indexes.get(db, &IndexKey::of(seq)).is_some()
    }

    /// Records that the unique index the sequence relies on exists in `db`.
    pub(crate) fn found_index(&self, db: &str, seq: &Sequence) {
        let idle = self.release_after();
        self.shared
            .indexes
            .get_or_insert(db, IndexKey::of(seq), idle, || ());
    }

    /// Keeps the write of the document at `key` whose caller went away before its answer
    /// came (see [`crate::pending`]), until `resume_insert` asks or it is released.
    pub(crate) fn orphaned(&self, db: &str, seq: &Sequence, key: &Key, orphan: Orphan) {
        let idle = self.release_after();
        let orphans =
            self.shared
                .orphans
                .get_or_insert(db, OrphanKey::of(seq, key), idle, Mutex::default);
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
        let at = OrphanKey::of(seq, key);
        let orphans = self.shared.orphans.get(db, &at)?;
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
                let of = CollectionKey::of(seq, &Scope::NONE);
                self.shared.collections.each(db, |key, state| {
                    if key.collection == of.collection && key.field == of.field {
                        stats.add(Stats {
                            in_flight: state.in_flight(),
                            ..Stats::of(&state.allocator)
                        });
                    }
                });
            }
            _ => {
                let of = CounterKey::of(seq, &Scope::NONE);
                self.shared.counters.each(db, |key, allocator| {
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

impl std::fmt::Debug for Sequences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequences")
            .field("held", &self.held())
            .field("release_idle_after", &self.release_after())
            .finish_non_exhaustive()
    }
}

/// A database of the deployment a [`Sequences`] handle serves: inserts through it share
/// that handle's state. Derefs to the driver's [`mongodb::Database`] for everything else.
///
/// ```no_run
/// # fn run(sequences: seqid::Sequences) {
/// let db = sequences.database("app");
/// let users = db.collection::<mongodb::bson::Document>("users");
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Database {
    db: mongodb::Database,
    sequences: Sequences,
    collections: Arc<Collections>,
}

/// The target collections of a [`Database`]'s inserts, each made once. A collection made
/// per insert (its name and the database's options copied, two allocations) cost a block
/// insert about 700 instructions.
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

impl Database {
    /// The handle this database belongs to.
    ///
    /// ```no_run
    /// # fn run(sequences: seqid::Sequences) {
    /// let db = sequences.database("app");
    /// let other = db.sequences().database("archive");
    /// # }
    /// ```
    pub fn sequences(&self) -> &Sequences {
        &self.sequences
    }
}

impl Deref for Database {
    type Target = mongodb::Database;

    fn deref(&self) -> &mongodb::Database {
        &self.db
    }
}

/// What inserts accept: a [`Database`] from a [`Sequences`] handle, whose state it
/// shares, or a bare [`mongodb::Database`].
///
/// Through a bare `mongodb::Database` every call works alone, with state made for it and
/// dropped after it, because nothing tells which deployment the database belongs to: a
/// `counters` insert sends its own `$inc` (the tutorial's two commands), a `block` insert
/// reserves exactly the ids it needs (no block is kept), an `optimistic` insert queries
/// the largest `_id` itself (tasks of one process may then race each other, each race a
/// retry). Ids are as unique either way; the handle makes them cheaper.
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("userid", collection = "users")]
/// # struct User { #[serde(rename = "_id")] id: i64 }
/// # async fn run(client: mongodb::Client) -> Result<(), seqid::Error> {
/// let bare = client.database("app");
/// User { id: 0 }.insert(&bare).await?;
/// let shared = seqid::Sequences::new(&client).database("app");
/// User { id: 0 }.insert(&shared).await?;
/// # Ok(()) }
/// ```
#[diagnostic::on_unimplemented(
    message = "seqid inserts into a `mongodb::Database` or a `seqid::Database`, not `{Self}`",
    label = "expected `&mongodb::Database` or `&seqid::Database`",
    note = "a type that derefs to a database can be passed as `&*db`; `Sequences::database` makes a `seqid::Database` that shares ids between tasks"
)]
pub trait AsDatabase: sealed::Sealed + Sync {
    #[doc(hidden)]
    fn route(&self) -> Route<'_>;
}

/// Where an insert goes, and the handle whose state it shares, if any.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Route<'a> {
    pub(crate) db: &'a mongodb::Database,
    pub(crate) sequences: Option<&'a Sequences>,
    /// The collections made once for `db` (a handle's database keeps them).
    pub(crate) collections: Option<&'a Collections>,
}

impl Route<'_> {
    pub(crate) fn counter(&self, seq: &Sequence, scope: &Scope) -> Arc<Allocator> {
        match self.sequences {
            Some(sequences) => sequences.counter(self.db.name(), seq, scope),
            // Exactly what this call asks: nothing is kept for a later call.
            None => Arc::new(Allocator::new(1)),
        }
    }

    pub(crate) fn collection(&self, seq: &Sequence, scope: &Scope) -> Arc<Optimistic> {
        match self.sequences {
            Some(sequences) => sequences.collection(self.db.name(), seq, scope),
            None => Arc::new(Optimistic::new()),
        }
    }
}

impl AsDatabase for mongodb::Database {
    fn route(&self) -> Route<'_> {
        Route {
            db: self,
            sequences: None,
            collections: None,
        }
    }
}

impl AsDatabase for Database {
    fn route(&self) -> Route<'_> {
        Route {
            db: &self.db,
            sequences: Some(&self.sequences),
            collections: Some(&self.collections),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for mongodb::Database {}
    impl Sealed for super::Database {}
}

/// What this process has done for one sequence in one database, from
/// [`Document::stats`](crate::Document::stats).
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
}

impl Stats {
    fn add(&mut self, other: Stats) {
        self.reservations += other.reservations;
        self.ids += other.ids;
        self.retries += other.retries;
        self.unused += other.unused;
        self.in_flight += other.in_flight;
    }

    fn of(allocator: &Allocator) -> Self {
        let tally = &allocator.tally;
        Stats {
            reservations: tally.reservations.load(Ordering::Relaxed),
            ids: tally.ids.load(Ordering::Relaxed),
            retries: tally.retries.load(Ordering::Relaxed),
            unused: allocator.unused(),
            in_flight: 0,
        }
    }
}

/// A counter document (of a scope), and how many ids one round trip reserves at least.
#[derive(Clone, PartialEq, Eq, Hash)]
struct CounterKey {
    counters: &'static str,
    sequence: &'static str,
    chunk: u64,
    scope: Scope,
}

impl CounterKey {
    fn of(seq: &Sequence, scope: &Scope) -> Self {
        CounterKey {
            counters: seq.counters,
            sequence: seq.name,
            chunk: match seq.strategy {
                Strategy::Block { block_size } => block_size.into(),
                _ => 1,
            },
            scope: scope.clone(),
        }
    }
}

/// A field (in a scope) of a target collection served by the optimistic loop.
#[derive(Clone, PartialEq, Eq, Hash)]
struct CollectionKey {
    collection: &'static str,
    field: &'static str,
    scope: Scope,
}

impl CollectionKey {
    fn of(seq: &Sequence, scope: &Scope) -> Self {
        CollectionKey {
            collection: seq.collection,
            field: seq.field,
            scope: scope.clone(),
        }
    }
}

/// A lock that a panic cannot have left half-written.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A document's place in a target collection: its scope and number in a field.
#[derive(Clone, PartialEq, Eq, Hash)]
struct OrphanKey {
    collection: &'static str,
    field: &'static str,
    key: Key,
}

impl OrphanKey {
    fn of(seq: &Sequence, key: &Key) -> Self {
        OrphanKey {
            collection: seq.collection,
            field: seq.field,
            key: key.clone(),
        }
    }
}

/// The unique index on a sequence's field and scope fields.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct IndexKey {
    collection: &'static str,
    field: &'static str,
    scope: &'static [&'static str],
}

impl IndexKey {
    fn of(seq: &Sequence) -> Self {
        IndexKey {
            collection: seq.collection,
            field: seq.field,
            scope: seq.scope,
        }
    }
}

/// Entries by database name, then by a key of `'static` parts (a lookup borrows the name
/// and allocates nothing), released when unused for a while.
struct Entries<K, V> {
    map: Mutex<Map<K, V>>,
}

struct Map<K, V> {
    /// foldhash, not SipHash: these are looked up on every insert (SipHash was about 700
    /// of the 5,200 instructions a block insert added to the driver's own work). Scope values may come from an
    /// application's users; foldhash's seeds are random per process and per map, so they
    /// cannot choose colliding keys without reverse-engineering the running process.
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
        Entries {
            map: Mutex::new(Map {
                by_database: foldhash::HashMap::default(),
                len: 0,
                sweep_above: SWEEP_FLOOR,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Map<K, V>> {
        // Every update below leaves the map whole, so a poisoned lock is still sound.
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get_or_insert(&self, db: &str, key: K, idle: Duration, make: impl FnOnce() -> V) -> Arc<V> {
        let now = Instant::now();
        let mut map = self.lock();
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
        let map = self.lock();
        Some(map.by_database.get(db)?.get(key)?.value.clone())
    }

    /// Calls `visit` with every entry of `db`, under the lock: keep it short.
    fn each(&self, db: &str, mut visit: impl FnMut(&K, &V)) {
        let map = self.lock();
        for (key, entry) in map.by_database.get(db).into_iter().flatten() {
            visit(key, &entry.value);
        }
    }

    fn len(&self) -> usize {
        self.lock().len
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
    #[tokio::test]
    async fn live_blocks_of_100_000_scopes_are_bounded() {
        use mongodb::bson::doc;
        const PER_PROJECT: Sequence =
            crate::sequence::construct::sequence(crate::sequence::construct::Parts {
                name: "ticket",
                collection: "tickets",
                counters: "counters",
                strategy: crate::sequence::construct::block(100),
                counter_write_concern: crate::CounterWriteConcern::Majority,
                start: 1,
                field: "number",
                scope: &["project"],
            });
        // A client connects lazily: no server is needed to hold state for it.
        let client = mongodb::Client::with_uri_str("mongodb://127.0.0.1:9")
            .await
            .unwrap();
        let sequences = Sequences::new(&client).release_idle_after(Duration::ZERO);
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
