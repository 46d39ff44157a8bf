//! The map of the crate, and the words its code coins: for work on seqid itself.
//!
//! # The map
//!
//! The layers are the folders of `seqid/src`, from the top down. Each imports only from the
//! folders below it, and each name from the module that defines it (never through
//! `lib.rs`, which declares the folders and re-exports the public API for users, with
//! `__private.rs` beside it for the paths the derive's expansion names); the
//! repository's `tests/layers.rs` holds the code to this, and `python3
//! ../shared/tools/modgraph.py seqid/src` prints the edges between modules. What `lib.rs`
//! makes public is listed in `seqid/public-api.txt`, which `tests/public_api.rs` checks
//! against the source: a change of the surface shows in review as a diff of that file.
//!
//! | folder | what it holds | its modules |
//! |---|---|---|
//! | `api/` | what a user calls: [`Document`](crate::Document)'s methods and the actions they return, the [`Sequences`](crate::Sequences) handle and its databases, a type's sequence on its own ([`SequenceOf`](crate::SequenceOf)) | `document`, `action/` (a file per action, `next` for a number on its own, `reserve` for a model's next id before its document, `items` for an append of items, `replace` for a document written back, and `transaction`), `sequences`, `sequence_of` |
//! | `insert/` | the orchestration, the only place where documents meet writes: check, take ids, fill, write, settle what the server answered; the loop over rounds | `one`, `many`, `natural`, `natural_many`, `later`, `items` (appends of items), `replace` (a document written back) |
//! | `source/` | the id sources, one per strategy: hand ids out per scope and say what an id costs when its document is not stored (a race lost, a refusal, a lost answer), through one interface (`source::race_lost`, ...) | `counted` (counters, block, gapless), `optimistic` (and its loop), `many` (`insert_many`'s rounds, per strategy), `batch` (a batch's documents sent together), `others` (a document's other sequences) |
//! | `items/` | items in a stored document's array, one subsystem: an append's commands and its rounds, with the turns of this process's appends per array | `commands` (an append's pipeline, read and conditional update, and what their answers mean), `rounds` (until it lands, is refused or gives up, within the call's budget) |
//! | `round_trip/` | the document's own round trips, one kind of command each, and what its answer means | `write`, `indexes`, `stored`, `replace` (a replace's read and conditional `replace_one`) |
//! | `call/` | the call layer above the subsystems: a call's context (every action's body runs in one, `Context::run`), its span, the handle's registry and what it keeps, found by the call's route | `context`, `span` (a call's span, and what it did), `registry`, `pending` (a write a cancelled caller left behind) |
//! | `counter/` | the counter, one subsystem: its document and commands, the gapless strategy whole, an id reserved for a document built later | `mod` (the counter document), `update`, `missing`, `admin`, `gapless` (ids in the caller's transaction, the counter read, made and advanced in it, a place before the first read, reserved ids and their tickets), `commit_queue`, `tickets`, `reserved` |
//! | `optimistic/` | the optimistic strategy's shared state and query: a scope's frontier, the largest stored id (which a missing counter's check reads too); its loop is `source::optimistic` | `frontier`, `largest` |
//! | `state/` | what calls share, below every subsystem: the allocator that shares round trips between a handle's tasks (the counters' and the frontiers'), the writes left running, the process's turns | `allocator`, `orphan`, `turns` |
//! | `deployment/` | the deployment a database lives on, one subsystem: facts read once, kept, decisions with no I/O, the gate every call passes first, and the report (public as [`deployment`](crate::deployment)) | `facts` (topology, shard keys, unique indexes), `known` (what was read, kept per handle or for the process), `sharding` (what holds where: decisions tested as a table), `gate`, `report` ([`check`](crate::deployment::check)) |
//! | `fields/` | a document's own fields, as one insert reads and fills them | `ids` (unset, filled, carried to a resume), `code` (display codes), `companions` (the other sequences' ids and an `ObjectId`, set and unset together), `items` (a document's arrays at insert), `scope`, `natural` (a natural key), `picked` (fields read without serializing the rest) |
//! | `named/` | a sequence named at run time, made once from its options and kept for the process, with the sequences the program's types declare | `mod` (the names and options kept), `declared` (the sequences the program's types declare, registered before `main`) |
//! | `base/` | what every layer above the schema builds on: the error type, numbers, small tools | `fate`, `error`, `message` (each kind's message), `next_step` (what a caller does next after an error: its predicates), `bulk_error` (what `insert_many` reports), `retried` (the message of a call that gave up), `replaced` (the replace's messages), `server`, `numeric`, `session`, `ending` (a cut commit or abort ends its transaction), `detach`, `once`, `backoff`, `retry`, `future` |
//! | `schema/` | the schema the derive targets, at the bottom: what a model and its sequence are, as constants and accessors; its modules import only one another | `model`, `sequence`, `id`, `item` (an item type and its numbering), `kind`, `layout`, `display`, `scoped` (a scope as a type) |
//!
//! An insert goes down the floors once and comes back up with its answer: an action
//! (`api::action`) boxes its call in a span and runs it in the call's context
//! (`call::context::Context::run`), through the gate (`deployment::gate::pass`); the
//! orchestration (`insert::one`) checks the document (`fields::ids`), asks its source for an
//! id (`source::counted::take_one`, or the optimistic loop), fills it in with its codes and
//! companions (`fields`), writes it (`round_trip::write`), and settles what the server
//! answered (`base::fate`), telling the source what became of the id.
//!
//! # Glossary
//!
//! The words the code coins, one line each; a plain word is used wherever one says the same.
//!
//! - **allocator**: hands out a counter's ids to the tasks of a handle, one round trip for
//!   every task waiting at once; the block strategy keeps the rest of a block (`state::allocator`).
//! - **append**: items added to a stored document's array, numbered after its mark
//!   (`insert::items`, its rounds in `items::rounds`), recognised by its token.
//! - **answered**: a command of the call has had an answer in the caller's transaction, so
//!   the driver knows the transaction began (`base::session`).
//! - **block, live block**: the ids a handle reserved with one `$inc` and hands out in
//!   memory (`state::allocator::LiveBlock`).
//! - **blank**: the sequence of every attribute's defaults that the derive's expansion copies
//!   and assigns the fields of (`schema::sequence::construct::BLANK`).
//! - **budget**: how long and how many times a call may try again after losing a race to
//!   another writer: the optimistic loop's, or an append's (`base::retry`).
//! - **call**: the options an action's setters gave, before its context is made
//!   (`call::context::Call`).
//! - **carried**: the ids a document brings to a resume (`fields::ids::carried`).
//! - **commit queue**: the process's gapless transactions on one counter, in the
//!   order they came, each waiting for the one before to commit (`counter::commit_queue`);
//!   a transaction's **place** in it is held from before its `$inc` until it ends
//!   (`counter::commit_queue::Place`).
//! - **companions**: the ids a document gets beside its number: its other sequences' and an
//!   `ObjectId` the insert makes, set and unset together (`fields::companions`).
//! - **context**: what one call is apart from its documents: sequence, route, session,
//!   budget (`call::context::Context`); every action's body runs in one, made once the
//!   gate lets the call through (`Context::run`), appends included.
//! - **counted**: the strategies that keep a counter: counters, block, gapless
//!   (`source::counted`).
//! - **counter**: the document an id is taken from, in a tool's layout
//!   (`counter::Counter`).
//! - **declaration**: a sequence as a type of the program declares it, with the type's path,
//!   registered by the derive before `main` (`named::declared`).
//! - **doing**: a driver's error said as seqid's, with what the round trip was doing, and
//!   noted where it is met (`base::error::Doing`, `base::server::noted`).
//! - **fate**: what became of a document written: stored, taken by another writer, refused,
//!   unknown (`base::fate::Fate`).
//! - **finishing**: a round trip that runs to its end in a task of its own if its caller
//!   goes away (`base::detach::Finishing`).
//! - **flusher**: the one task at a time that makes an allocator's round trips for the
//!   callers in its queue (`state::allocator`).
//! - **frontier**: the optimistic strategy's state for one scope of a collection: the
//!   candidates out and the largest seen (`optimistic::frontier`).
//! - **gate**: the check every call passes first, on a sharded cluster (`deployment::gate`).
//! - **group commit**: one `$inc` serving every task that waits at once (the allocator's).
//! - **handed**: ids given to a caller, back to the live block if it drops them unused
//!   (`state::allocator::Handed`).
//! - **counter value**: what a tool's counter holds, the last id handed out or the next
//!   (`schema::layout::CounterValue`; the attribute's `counter_holds`).
//! - **guard**: what a write keeps until it ends, for whoever waits on it (the optimistic
//!   candidates in flight: `round_trip::write::insert_one`).
//! - **held**: what a handle keeps in memory: its allocators and frontiers
//!   ([`Sequences::held`](crate::Sequences::held)), a live block's ids not handed out yet;
//!   a gapless counter's **holder** is the session whose transaction took it last
//!   (`counter::commit_queue`).
//! - **in flight**: the optimistic candidates of one round, out until their write ends
//!   (`optimistic::frontier::InFlight`).
//! - **key**: where a document's id is, its scope and number (`fields::scope::Key`).
//! - **known**: what was read of a deployment and kept (`deployment::known`).
//! - **left behind**: the write of a caller that went away, waited for by a resume
//!   (`call::pending::left_behind`).
//! - **lines**: the process's turns and commit queues, by what they guard, kept while in
//!   use (`state::turns::Lines`).
//! - **mark**: the last number handed out in a document's array of items, a declared field
//!   of the document (`#[seq_items(last = "...")]`; `schema::item`).
//! - **maximum read**: what the optimistic loop asks of the maximum query: the scope, an
//!   id to read above, the session (`optimistic::frontier::MaximumRead`).
//! - **given scope**: a scope as `.scope(...)` gave it, checked when the call runs
//!   (`fields::scope::GivenScope`).
//! - **natural key**: the fields `find_or_insert` finds a document by, unique in its
//!   collection (`fields::natural`); its turns, and a draft's, are `state::turns::key_turn`.
//! - **named sequence**: a sequence named at run time (`db.sequence(name)`, a number on its
//!   own), made from its options once and kept for the process (`named`; its
//!   options as given: `named::Spec`); with a name a type declares, the
//!   declaration's options where the call gives none (`named::with_declarations`).
//! - **orphan**: a write whose caller went away, kept by the handle by its document's key
//!   (`state::orphan`).
//! - **others**: a document's sequences but its primary (`source::others`).
//! - **outgoing**: the documents of a batch sent together, their positions and keys
//!   (`source::batch::Outgoing`).
//! - **picked**: top-level fields read from a document without serializing the rest
//!   (`fields::picked`).
//! - **progress**: one optimistic call's memory of the ids it saw taken (`source::optimistic`).
//! - **race lost**: another caller stored the key, or numbered the draft, first
//!   (`source::race_lost`).
//! - **registry**: what a handle keeps per database and sequence (`call::registry`).
//! - **route**: where a call goes: its database, and its handle's registry if any
//!   (`call::registry::Route`).
//! - **scope**: the values of a sequence's scope fields, each with its own counter
//!   (`fields::scope::Scope`); as a type, what `.scope(...)` takes ([`scoped`](crate::scoped)).
//! - **reserved id**: an id reserved for a document built later, with the scope it was taken
//!   for and, for a gapless id, its session and ticket, as the insert that stores it reads
//!   it; the public token ([`Reserved`](crate::Reserved)) wraps one
//!   (`counter::reserved::ReservedId`).
//! - **sending**: whether a write is a first send or a copy sent again (`base::fate::Sending`).
//! - **reserver**: what makes an allocator's round trip that reserves ids: the counter's
//!   update, or the optimistic maximum query (`state::allocator::Reserver`).
//! - **source**: an id source, one per strategy (`source/`).
//! - **standing**: where each document of a `find_or_insert_many` stands: found, to
//!   insert, inserted (`insert::natural_many`).
//! - **stored**: a document read back, as the model and as stored (`round_trip::stored`).
//! - **tally**: what an allocator or frontier has done, for [`Stats`](crate::Stats)
//!   (`state::allocator::Tally`).
//! - **traced**: a call's answer with what it did, for its span (`call::span::Traced`).
//! - **to**: where and how a write goes: the collection, the sequence, the sending
//!   (`round_trip::write`).
//! - **token**: what a caller keeps of a call, so that what follows meets that call and no
//!   other: a reserved id's ([`Reserved`](crate::Reserved), inserted with its document),
//!   an append's (an `ObjectId` among the document's recent appends, so that the append
//!   sent again lands once: `items::commands`).
//! - **ticket**: what tells a gapless token's reservation from a later one of the same id
//!   after its transaction aborted (`counter::tickets`).
//! - **turns**: the process's callers of one scope, one natural key or draft, or one array,
//!   one at a time (`state::turns`).
//! - **waiting**: a write under way, handed to the handle if its caller drops it
//!   (`call::pending::Waiting`).
//! - **wanted**: the other sequences' ids a batch needs, by sequence and scope
//!   (`source::others::Wanted`).
