//! [`Sequences`]: the handle that owns the state this process keeps for the sequences of
//! one deployment (the allocators that share round trips and blocks between tasks, the
//! optimistic loop's frontiers), as the driver's `Client` owns its pools; the
//! [`Database`]s it makes; and [`AsDatabase`], what inserts accept.
//!
//! The driver gives a `Client` no identity, so state cannot be found from a bare
//! `mongodb::Database`: two clients to two deployments may use the same database name.
//! Hence the handle, which makes its databases itself ([`Sequences::database`]) and so
//! knows they all reach its own deployment. A bare `mongodb::Database` gets state made
//! for the one call and dropped after it: always correct, never shared.

use std::sync::Arc;
use std::time::Duration;

use mongodb::options::DatabaseOptions;

use crate::api::action::next::NamedSequence;
use crate::call::registry::{Collections, Registry, Route, Stats};
use crate::schema::sequence::Sequence;

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
/// affected, and [`stats`](crate::SequenceOf::stats) count again from zero.
#[derive(Clone)]
pub struct Sequences {
    client: mongodb::Client,
    registry: Arc<Registry>,
}

impl Sequences {
    /// How long a sequence's state is kept once no call uses it, unless
    /// [`release_idle_after`](Self::release_idle_after) says otherwise: 10 minutes.
    pub const DEFAULT_RELEASE_AFTER: Duration = crate::call::registry::DEFAULT_RELEASE_AFTER;

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
            client: client.clone(),
            registry: Arc::new(Registry::new()),
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
        self.registry.release_idle_after(idle);
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
        self.bind(self.client.database(name))
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
        self.bind(self.client.database_with_options(name, options))
    }

    /// The client this handle was made for.
    ///
    /// ```no_run
    /// # async fn run(sequences: seqid::Sequences) -> mongodb::error::Result<()> {
    /// let mut session = sequences.client().start_session().await?;
    /// # Ok(()) }
    /// ```
    pub fn client(&self) -> &mongodb::Client {
        &self.client
    }

    /// How many sequences (for a scoped sequence, scopes) this handle holds state for: a
    /// counter's allocator (with its live block) or an optimistic state each; those in
    /// use, or used within [`release_idle_after`](Sequences::release_idle_after), give or
    /// take what the next sweep releases.
    ///
    /// ```no_run
    /// # fn run(client: mongodb::Client) {
    /// let sequences = seqid::Sequences::new(&client);
    /// assert_eq!(sequences.held(), 0);
    /// # }
    /// ```
    pub fn held(&self) -> usize {
        self.registry.held()
    }

    fn bind(&self, db: mongodb::Database) -> Database {
        Database {
            db,
            sequences: self.clone(),
            collections: Arc::default(),
        }
    }
}

impl std::fmt::Debug for Sequences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequences")
            .field("held", &self.held())
            .field("release_idle_after", &self.registry.release_after())
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

    /// What the handle has done for `seq` in this database.
    pub(crate) fn stats(&self, seq: &Sequence) -> Stats {
        self.sequences.registry.stats(self.db.name(), seq)
    }
}

impl std::ops::Deref for Database {
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
/// the largest `_id` itself (tasks of one process then take turns, one insert at a time,
/// where a handle's tasks insert side by side under distinct candidates). A `gapless`
/// transaction takes its turn in the process's one line per counter either way. Ids are as
/// unique either way; the handle makes them cheaper.
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
pub trait AsDatabase: sealed::Routed + Sync {
    /// The sequence `name`, named at run time: its next id, or next ids, with no document
    /// ([`NamedSequence::next`], [`NamedSequence::next_n`]), from the counter a type
    /// declaring the same sequence takes its ids from, and the MongoDB tutorial's
    /// `getNextSequence(name)` increments. Options by method, as in the attribute
    /// (counters collection, layout, start, step, scope, strategy); a name a type of the
    /// program declares takes the type's options where the call gives none, and refuses
    /// those that differ. A type's own numbers: [`T::sequence()`](crate::Document::sequence).
    /// See the guide's [numbers on their own](crate::guide::numbers).
    ///
    /// ```no_run
    /// use seqid::AsDatabase; // a seqid::Database's method too
    ///
    /// # async fn run(client: mongodb::Client) -> Result<(), seqid::Error> {
    /// let db = client.database("app");
    /// let id = db.sequence("userid").next().await?; // getNextSequence("userid")
    /// let shared = seqid::Sequences::new(&client).database("app");
    /// let ids = shared.sequence("userid").block(100).next_n(5).await?;
    /// # Ok(()) }
    /// ```
    fn sequence(&self, name: &str) -> NamedSequence<'_> {
        NamedSequence::new(self.route(), name)
    }
}

impl AsDatabase for mongodb::Database {}
impl AsDatabase for Database {}

/// Sealed: only seqid's two databases are [`AsDatabase`], and where a call goes is
/// seqid's own business (the method is not part of the public API).
pub(crate) mod sealed {
    use super::{Database, Route};

    pub trait Routed {
        /// Where a call through this database goes, and the state it shares.
        fn route(&self) -> Route<'_>;
    }

    impl Routed for mongodb::Database {
        fn route(&self) -> Route<'_> {
            Route::bare(self)
        }
    }

    impl Routed for Database {
        fn route(&self) -> Route<'_> {
            Route {
                db: &self.db,
                registry: Some(&self.sequences.registry),
                collections: Some(&self.collections),
            }
        }
    }
}
