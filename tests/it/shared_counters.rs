//! seqid sharing a counter with the other tools that keep one (issue 28): each tool runs
//! for real (see `support::tools`) on the same sequence as seqid models declared with the
//! tool's `layout = "..."`, and both sides must hand out every id once, store every
//! document once, and leave the counter as the tool lays it out, at the last id handed out.
//!
//! The scenarios are written once, over a [`Case`]: a tool, its script and what it
//! prints, where the documents and the counter are, the counter's layout as the tool
//! writes it (read from the tool's source and checked alone in `other_tools`), and seqid's
//! two models of the sequence, one with the counters strategy and one with blocks. Each
//! tool runs through each scenario:
//!
//! - [`side_by_side`](Case::side_by_side): two tool processes and sixteen seqid tasks
//!   write at once (a handle and bare, `insert` and `insert_many`, counters and block,
//!   unique documents and documents equal but for the id), then one more tool process
//!   reads the counter they left;
//! - [`tool_after_seqid`](Case::tool_after_seqid): seqid creates the counter, the tool
//!   goes on from it;
//! - [`seqid_after_tool`](Case::seqid_after_tool): the tool creates the counter, seqid
//!   goes on from it, reads it (`last_reserved`) and raises it over ids written by other
//!   means (`sync_counter`), and the tool goes on from there.
//!
//! A tool with a step (`inc_amount`, `incrementBy`) runs the three scenarios with seqid's
//! `step`, and the tutorial layout's `step` and `start` interleave odd and even ids.
//!
//! Equal documents never tell who wrote them: what each writer was told (the ids a tool
//! printed, the ids seqid returned) is the record, and the collection must hold exactly
//! those ids, each once, each with its writer's document.

use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;

use futures_util::TryStreamExt;
use mongodb::Database;
use mongodb::bson::spec::ElementType;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::kind::WithCounter;
use seqid::{AsDatabase, Document, Strategy};
use seqid_harness::{TestDb, Tool, test_db};
use serde::Serialize;
use tokio::task::JoinHandle;

use crate::support::tools::{
    Printed, Script, assert_unique_index, create_identitycounters_on_secantus, keys, nx, secantus,
};
use crate::support::{all_documents, id_of, integer, shared};

/// The tool's processes in [`side_by_side`](Case::side_by_side), and the documents each
/// saves.
const TOOL_WRITERS: [&str; 2] = ["a", "b"];
const TOOL_DOCS: u32 = 20;

/// Calls each seqid task makes, and the documents of each `insert_many` call.
const CALLS: usize = 3;
const BATCH: usize = 3;

/// The title of every equal document: the same for every task, model and sequence.
const EQUAL: &str = "seqid";

/// Each id handed out, with the title of the document it was handed out for.
type Handed = BTreeMap<i64, String>;

/// A seqid model of a case's sequence: a document with the tool's title field (`name` or
/// `title`), in the case's scope. Its id is unset until inserted.
trait Shared: Document<Kind: WithCounter> + std::fmt::Debug + Send + Sync + 'static {
    fn titled(title: &str) -> Self;
}

/// `models!(Name, NameBlock, <shape>, [<seq_id>])`: seqid's two models of one sequence
/// (see [`Case`]), `Name` with `#[seq_id(<seq_id>)]` and the counters strategy, and
/// `NameBlock` with `strategy = "block", block_size = 5` added. The shape is one of:
///
/// - `{ id: Type, title_field }`: a model `{ _id, title }` whose `_id` the sequence
///   numbers;
/// - `{ project, number, title }`: an issue of project `apollo`, numbered per project on
///   `number`. No `_id` field: the server gives each its ObjectId, so equal issues stay
///   equal.
macro_rules! models {
    ($counters:ident, $block:ident, $shape:tt, [$($attr:tt)*] $(, block: [$($block_attr:tt)*])?) => {
        models!(@one $counters, $shape, [$($attr)*]);
        models!(@one $block, $shape, [$($attr)*, strategy = "block", block_size = 5 $(, $($block_attr)*)?]);
    };
    (@one $name:ident, { id: $id:ty, $title:ident }, [$($attr:tt)*]) => {
        #[derive(Debug, Serialize, seqid::Document)]
        #[seq_id($($attr)*)]
        struct $name {
            #[serde(rename = "_id")]
            id: $id,
            $title: String,
        }

        impl Shared for $name {
            fn titled(title: &str) -> Self {
                $name { id: Default::default(), $title: title.to_owned() }
            }
        }
    };
    (@one $name:ident, { project, number, title }, [$($attr:tt)*]) => {
        #[derive(Debug, Serialize, seqid::Document)]
        #[seq_id(collection = "issues")]
        struct $name {
            project: String,
            #[seq_id($($attr)*)]
            number: i64,
            title: String,
        }

        impl Shared for $name {
            fn titled(title: &str) -> Self {
                $name { project: "apollo".into(), number: 0, title: title.to_owned() }
            }
        }
    };
}

models!(MongoEngineUser, MongoEngineUserBlock, { id: i64, name }, [
    "users.id", collection = "users", layout = "mongoengine"
]);
// nx-27017 0.8.1 refuses collection names with a dot (`mongoengine.counters`, the
// layout's default): there MongoEngine and seqid both name the counters collection
// `mongoengine_counters` (see `mongoengine`).
models!(NxMongoEngineUser, NxMongoEngineUserBlock, { id: i64, name }, [
    "users.id", collection = "users", layout = "mongoengine", counters = "mongoengine_counters"
]);

models!(Ticket, TicketBlock, { id: i64, title }, [
    "ticket_seq", collection = "tickets", layout = "mongoose-sequence"
]);
models!(TicketStep3, TicketStep3Block, { id: i64, title }, [
    "ticket_seq", collection = "tickets", layout = "mongoose-sequence", step = 3
]);

models!(Issue, IssueBlock, { project, number, title }, [
    "issue_seq", scope = "project", layout = "mongoose-sequence"
]);

// The two tools whose first id is 0: an `Option<i64>` id, in which 0 is an id.
models!(Book, BookBlock, { id: Option<i64>, title }, [
    "Book", collection = "books", layout = "mongoose-auto-increment"
]);

models!(Order, OrderBlock, { id: Option<i64>, title }, [
    "Order", collection = "orders", layout = "typegoose"
]);
models!(OrderStep5, OrderStep5Block, { id: Option<i64>, title }, [
    "Order", collection = "orders", layout = "typegoose", step = 5
]);

// Two sequences on the tutorial's layout interleaving in one collection: odd ids and
// even ids. Their test reads the counter as the handle's last block's end, which is the
// live block's (the blocks reserved when spent): a block reserved early lies above ids the
// other writers took meanwhile, where no count of what the handle holds can place it.
models!(Odd, OddBlock, { id: i64, title }, [
    "odd", collection = "interleaved", step = 2
], block: [prefetch = false]);
models!(Even, EvenBlock, { id: i64, title }, [
    "even", collection = "interleaved", step = 2, start = 2
], block: [prefetch = false]);

/// A sequence as it is stored: where its documents and its counter are, and which ids it
/// hands out.
struct Stored {
    /// The collection of the documents, the field the sequence numbers, and the field
    /// that holds each document's title.
    collection: &'static str,
    field: &'static str,
    title: &'static str,
    /// The scope field and the value the documents here are in, for a scoped sequence.
    scope: Option<(&'static str, &'static str)>,
    /// The counters collection, the filter that finds the counter, the field that holds
    /// its value.
    counters: &'static str,
    counter: BsonDocument,
    value: &'static str,
    /// The ids: `first`, `first + step`, `first + 2 × step`, ...
    first: i64,
    step: i64,
}

impl Stored {
    /// The `k`-th id of the sequence, from 0.
    fn nth(&self, k: i64) -> i64 {
        self.first + k * self.step
    }

    /// The first id of the sequence from 90 on. A work-around for nx-27017 0.8.1, which
    /// orders an unfiltered sort on `_id` as text ("6" above "50", see `support`): an
    /// explicit id from 90 to 99 is the largest both as a number and as text among ids
    /// below 90, so that the largest id `sync_counter` finds is the same on every server.
    fn first_from_90(&self) -> i64 {
        let k = (90 - self.first + self.step - 1) / self.step;
        let id = self.nth(k);
        assert!(id < 100, "{id}: no longer the largest as text");
        id
    }

    /// The filter of the sequence's documents: its scope's, or every document.
    fn documents(&self) -> BsonDocument {
        match self.scope {
            Some((field, value)) => doc! { field: value },
            None => doc! {},
        }
    }

    /// Every document of the sequence, as `id -> title`; an id stored twice fails.
    async fn stored(&self, db: &Database) -> Handed {
        let docs: Vec<BsonDocument> = db
            .collection(self.collection)
            .find(self.documents())
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let mut stored = Handed::new();
        for d in &docs {
            let id = d
                .get(self.field)
                .and_then(integer)
                .unwrap_or_else(|| panic!("{}: no integer {} in {d}", self.collection, self.field));
            let title = d
                .get_str(self.title)
                .unwrap_or_else(|_| panic!("no title in {d}"));
            if let Some(other) = stored.insert(id, title.to_owned()) {
                panic!(
                    "{}: {id} stored twice, for {other:?} and {d}",
                    self.collection
                );
            }
        }
        stored
    }

    /// Checks that every id is the sequence's: `first + k × step` for some `k >= 0`.
    fn assert_in_progression(&self, ids: &Handed) {
        let (first, step) = (self.first, self.step);
        let astray: Vec<_> = ids
            .keys()
            .filter(|id| **id < first || (**id - first) % step != 0)
            .collect();
        assert!(
            astray.is_empty(),
            "ids that are not {first} + k × {step}: {astray:?}"
        );
    }

    /// The counter document, read with the driver by the tool's filter: there must be
    /// exactly one.
    async fn counter(&self, db: &Database) -> BsonDocument {
        let counters = all_documents(db, self.counters).await;
        let found: Vec<&BsonDocument> = counters
            .iter()
            .filter(|c| self.counter.iter().all(|(k, v)| c.get(k) == Some(v)))
            .collect();
        assert_eq!(
            found.len(),
            1,
            "one counter {} in {}: {counters:?}",
            self.counter,
            self.counters
        );
        found[0].clone()
    }

    /// The counter's value, which must be a number a tool reads: an Int32, an Int64 or a
    /// whole Double.
    async fn counter_value(&self, db: &Database) -> i64 {
        let counter = self.counter(db).await;
        let value = counter.get(self.value);
        value
            .and_then(integer)
            .unwrap_or_else(|| panic!("{}: not a number in {counter}", self.value))
    }
}

/// A tool that keeps a sequence, and seqid's models of it: `C` with the counters
/// strategy, `B` with blocks.
struct Case<C, B> {
    /// The tool's script, and its environment.
    script: Script,
    /// What the script prints before each id of the sequence.
    printed: &'static str,
    stored: Stored,
    /// The counter as the tool writes it: its fields (sorted), the type of its value,
    /// and the unique index the tool makes on its counters (name and keys).
    fields: &'static [&'static str],
    value_type: ElementType,
    index: Option<(&'static str, BsonDocument)>,
    /// Whether the tool asks for that index with `background: true` (mongoose 6 and 8
    /// do; mongoose 9 no longer does), which SecantusDB compares (see
    /// [`let_the_tool_make_its_index_on_secantus`](Case::let_the_tool_make_its_index_on_secantus)).
    index_in_background: bool,
    /// How the tool creates its counter.
    creates: Creates,
    models: PhantomData<fn() -> (C, B)>,
}

/// How a tool creates its counter, which decides whether it can create it while another
/// writer does (see [`Case::counter_made_first`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Creates {
    /// By an upsert at its first save (MongoEngine's `$inc`, mongoose-sequence's
    /// `$setOnInsert` of its first id, which it takes when told `updatedExisting: false`).
    ByUpsert,
    /// By an insert when the plugin is applied, at start-up, whose failure it ignores
    /// (mongoose-auto-increment).
    AtStartup,
    /// At its first save, by reading it and, finding none, inserting it: two steps, so
    /// the save fails (E11000 on the tool's unique index) when another writer creates
    /// the counter in between, be it seqid or another process of the tool
    /// (@typegoose/auto-increment).
    ByReadThenInsert,
}

/// MongoEngine 0.29.3's `SequenceField` on `User.id` (collection `users`): `{ _id:
/// "users.id", next }` in `counters`, `next` an Int32; ids from 1.
fn mongoengine<C: Shared, B: Shared>(counters: &'static str) -> Case<C, B> {
    let env = match counters {
        "mongoengine.counters" => vec![],
        _ => vec![("MONGOENGINE_COUNTERS", counters)],
    };
    Case {
        script: Script {
            tool: Tool::MongoEngine,
            file: "mongoengine_users.py",
            env,
        },
        printed: "user",
        stored: Stored {
            collection: "users",
            field: "_id",
            title: "name",
            scope: None,
            counters,
            counter: doc! { "_id": "users.id" },
            value: "next",
            first: 1,
            step: 1,
        },
        fields: &["_id", "next"],
        value_type: ElementType::Int32,
        index: None,
        index_in_background: false,
        creates: Creates::ByUpsert,
        models: PhantomData,
    }
}

/// mongoose-sequence 6.0.1's `ticket_seq` on `Ticket._id` (collection `tickets`), with
/// `inc_amount` `step`: `{ _id: ObjectId, id: "ticket_seq", reference_value: null, seq }`
/// in `counters`, `seq` an Int32, unique on `{ id, reference_value }`; ids from 1.
fn tickets<C: Shared, B: Shared>(step: i64) -> Case<C, B> {
    Case {
        script: Script {
            tool: Tool::MongooseSequence,
            file: "mongoose_sequence.js",
            env: vec![
                ("MONGOOSE_SEQUENCE_SCOPED", "0"),
                ("SEQID_STEP", step_text(step)),
            ],
        },
        printed: "ticket",
        stored: Stored {
            collection: "tickets",
            field: "_id",
            title: "title",
            scope: None,
            counters: "counters",
            counter: doc! { "id": "ticket_seq", "reference_value": Bson::Null },
            value: "seq",
            first: 1,
            step,
        },
        fields: &["_id", "id", "reference_value", "seq"],
        value_type: ElementType::Int32,
        index: Some((
            "id_1_reference_value_1",
            doc! { "id": 1, "reference_value": 1 },
        )),
        index_in_background: true,
        creates: Creates::ByUpsert,
        models: PhantomData,
    }
}

/// mongoose-sequence 6.0.1's `issue_seq` on `Issue.number`, per `project` (collection
/// `issues`), in project `apollo`: `{ _id: ObjectId, id: "issue_seq", reference_value: {
/// project: "apollo" }, seq }`; numbers from 1 in each project.
fn issues() -> Case<Issue, IssueBlock> {
    Case {
        script: Script {
            tool: Tool::MongooseSequence,
            file: "mongoose_sequence.js",
            env: vec![("MONGOOSE_SEQUENCE_TICKETS", "0")],
        },
        printed: "issue/apollo",
        stored: Stored {
            collection: "issues",
            field: "number",
            title: "title",
            scope: Some(("project", "apollo")),
            counters: "counters",
            counter: doc! { "id": "issue_seq", "reference_value": { "project": "apollo" } },
            value: "seq",
            first: 1,
            step: 1,
        },
        ..tickets(1)
    }
}

/// mongoose-auto-increment 5.0.1 on `Book._id` (collection `books`): `{ _id: ObjectId,
/// model: "Book", field: "_id", count, __v: 0 }` in `identitycounters`, `count` an Int32,
/// unique on `{ field, model }`; ids from 0.
fn books() -> Case<Book, BookBlock> {
    Case {
        script: Script {
            tool: Tool::MongooseAutoIncrement,
            file: "mongoose_auto_increment.js",
            env: vec![],
        },
        printed: "book",
        stored: Stored {
            collection: "books",
            field: "_id",
            title: "title",
            scope: None,
            counters: "identitycounters",
            counter: doc! { "model": "Book", "field": "_id" },
            value: "count",
            first: 0,
            step: 1,
        },
        fields: &["__v", "_id", "count", "field", "model"],
        value_type: ElementType::Int32,
        index: Some(("field_1_model_1", doc! { "field": 1, "model": 1 })),
        index_in_background: true,
        creates: Creates::AtStartup,
        models: PhantomData,
    }
}

/// @typegoose/auto-increment 5.0.1's `AutoIncrementID` on `Order._id` (collection
/// `orders`), with `incrementBy` `step`: `{ _id: ObjectId, modelName: "Order", field:
/// "_id", count }` in `identitycounters`, `count` an Int64, unique on `{ field, modelName
/// }`; ids from 0.
fn orders<C: Shared, B: Shared>(step: i64) -> Case<C, B> {
    Case {
        script: Script {
            tool: Tool::TypegooseAutoIncrement,
            file: "typegoose_auto_increment.js",
            env: vec![("SEQID_STEP", step_text(step))],
        },
        printed: "order",
        stored: Stored {
            collection: "orders",
            field: "_id",
            title: "title",
            scope: None,
            counters: "identitycounters",
            counter: doc! { "modelName": "Order", "field": "_id" },
            value: "count",
            first: 0,
            step,
        },
        fields: &["_id", "count", "field", "modelName"],
        value_type: ElementType::Int64,
        index: Some(("field_1_modelName_1", doc! { "field": 1, "modelName": 1 })),
        index_in_background: false,
        creates: Creates::ByReadThenInsert,
        models: PhantomData,
    }
}

/// The steps the tests use, as the scripts' `SEQID_STEP`.
fn step_text(step: i64) -> &'static str {
    match step {
        1 => "1",
        3 => "3",
        5 => "5",
        _ => panic!("no SEQID_STEP for {step}"),
    }
}

impl<C: Shared, B: Shared> Case<C, B> {
    /// The three scenarios, each in a database of its own named from `label`.
    async fn in_every_scenario(&self, label: &str) {
        self.side_by_side(&test_db(&format!("{label}_at_once")).await)
            .await;
        self.tool_after_seqid(&test_db(&format!("{label}_after_seqid")).await)
            .await;
        self.seqid_after_tool(&test_db(&format!("{label}_before_seqid")).await)
            .await;
    }

    /// Two tool processes save [`TOOL_DOCS`] documents each while sixteen seqid tasks
    /// insert theirs (see [`spawn_writers`]), all let go at once. Every id is handed out
    /// once and is the sequence's; the collection holds exactly the documents handed an
    /// id, each under its id; the counter is where the last reservation left it, laid out
    /// as the tool lays it out; and a tool process started afterwards goes on from it.
    /// (Where the writers cannot create the counter at once, see
    /// [`counter_made_first`](Case::counter_made_first), one seqid insert creates it
    /// first.)
    async fn side_by_side(&self, test: &TestDb) {
        let stored = &self.stored;
        if stored.counters == "identitycounters" {
            create_identitycounters_on_secantus(test).await;
        }
        let handle = shared(test);
        let bare: Database = (**test).clone();
        let mut handed = Handed::new();
        if self.counter_made_first() {
            let mut first = C::titled("seqid-first");
            let id = id_of::<C>(first.insert(&bare).await.unwrap());
            assert_eq!(id, stored.nth(0), "the counter created by seqid");
            hand(&mut handed, [(id, "seqid-first".to_owned())]);
            self.let_the_tool_make_its_index_on_secantus(test).await;
        }
        // The processes connect (and make their indexes) first: seqid's tasks start
        // when the tool's processes are let go.
        let mut tool = self.script.start(test, TOOL_DOCS, &TOOL_WRITERS).await;
        tool.go();
        let writers = spawn_writers::<C, B>("seqid", &handle, &bare);
        let printed = tool.finish().await;
        let written = Written::of(writers).await;
        // One counter, before anything else: two would explain any id handed out twice.
        let counter = stored.counter(test).await;

        hand(
            &mut handed,
            self.tool_handed(&printed, &TOOL_WRITERS, TOOL_DOCS),
        );
        hand(&mut handed, written.ids);
        stored.assert_in_progression(&handed);
        assert_eq!(
            stored.stored(test).await,
            handed,
            "every document stored once, under the id its writer was told"
        );

        // The counter holds the largest id reserved: handed out, or at the end of the
        // block the handle reserved last (a bare call reserves exactly what it needs).
        let largest = *handed.keys().max().unwrap();
        let block_end = block_end::<B>(&handle, &written.block_via_handle, stored.step);
        let last = largest.max(block_end);
        self.assert_layout(&counter);
        assert_eq!(
            counter.get(stored.value).and_then(integer),
            Some(last),
            "the counter at the largest id reserved ({largest} handed out, the handle's block up to {block_end}): {counter}"
        );

        // The tool reads what seqid left and goes on from it.
        let after = self.script.run(test, 1, &["after"]).await;
        assert_eq!(
            after[0].get(self.printed),
            Some(&vec![last + stored.step]),
            "the tool after everyone: {after:?}"
        );
        assert_eq!(stored.counter_value(test).await, last + stored.step);
    }

    /// On a fresh database seqid hands out the first three ids (one `insert` bare, one
    /// `insert_many` of 2 through a handle), which creates the counter as the tool lays
    /// it out; then one tool process saves 3, which continue right after seqid's. The
    /// counter keeps the tool's layout, the tool's unique index is there, and the
    /// collection holds the six documents.
    async fn tool_after_seqid(&self, test: &TestDb) {
        let stored = &self.stored;
        let handle = shared(test);
        let mut one = C::titled("seqid-0");
        let id = id_of::<C>(one.insert(&**test).await.unwrap());
        let mut two = [C::titled("seqid-1"), C::titled("seqid-2")];
        let ids: Vec<i64> = C::insert_many(&mut two, &handle)
            .await
            .unwrap()
            .into_iter()
            .map(id_of::<C>)
            .collect();
        assert_eq!(
            [id, ids[0], ids[1]],
            [stored.nth(0), stored.nth(1), stored.nth(2)],
            "seqid's ids, from the sequence's first"
        );
        let mut handed = Handed::new();
        hand(
            &mut handed,
            [(id, "seqid-0"), (ids[0], "seqid-1"), (ids[1], "seqid-2")]
                .map(|(id, title)| (id, title.to_owned())),
        );
        let counter = stored.counter(test).await;
        self.assert_layout(&counter);
        self.assert_value_type(&counter);
        assert_eq!(
            counter.get(stored.value).and_then(integer),
            Some(stored.nth(2)),
            "created by seqid at the last id it handed out: {counter}"
        );
        if let Some((name, keys)) = &self.index {
            // seqid made the tool's unique index before the counter, as the tool would.
            assert_unique_index(test, stored.counters, name, keys.clone()).await;
            self.let_the_tool_make_its_index_on_secantus(test).await;
        }

        let printed = self.script.run(test, 3, &["tool"]).await;
        assert_eq!(
            printed[0].get(self.printed),
            Some(&vec![stored.nth(3), stored.nth(4), stored.nth(5)]),
            "the tool goes on right after seqid: {printed:?}"
        );
        hand(&mut handed, self.tool_handed(&printed, &["tool"], 3));
        let counter = stored.counter(test).await;
        self.assert_layout(&counter);
        self.assert_value_type(&counter);
        assert_eq!(
            counter.get(stored.value).and_then(integer),
            Some(stored.nth(5))
        );
        if let Some((name, keys)) = &self.index {
            assert_unique_index(test, stored.counters, name, keys.clone()).await;
        }
        assert_eq!(stored.stored(test).await, handed, "every document once");
    }

    /// One tool process saves 3 documents, creating the counter; seqid reads it
    /// (`last_reserved`, in ids), goes on right after the tool's ids (an `insert` bare, an
    /// `insert_many` of 2 through a handle, then a block through the handle), raises it
    /// over an id written by other means (`sync_counter`), and a tool process then goes on
    /// from there. The counter keeps the tool's layout and the type of its value
    /// throughout.
    async fn seqid_after_tool(&self, test: &TestDb) {
        let stored = &self.stored;
        if stored.counters == "identitycounters" {
            create_identitycounters_on_secantus(test).await;
        }
        let handle = shared(test);
        let bare: &Database = test;
        // Work-around for nx-27017 0.8.1 only: its findAndModify upsert ignores
        // `$setOnInsert` and answers without `lastErrorObject`, so mongoose-sequence's
        // first save (an upsert that sets `seq: start_seq` on insert and, told
        // `updatedExisting: false`, hands out `start_seq`) leaves a counter without `seq`
        // and `$inc`s it from nothing: the tool's ids start at `inc_amount` instead of 1
        // (the same ids with a step of 1). With a step, there the counter is created
        // before the tool's first save as that save creates it on MongoDB (at the one
        // before the first id, which the save then takes).
        if nx() && self.script.tool == Tool::MongooseSequence && stored.step != 1 {
            let mut counter = stored.counter.clone();
            let before_first = i32::try_from(stored.first - stored.step).unwrap();
            counter.insert(stored.value, before_first);
            test.collection::<BsonDocument>(stored.counters)
                .insert_one(counter)
                .await
                .unwrap();
        }
        let printed = self.script.run(test, 3, &["tool"]).await;
        let mut handed = self.tool_handed(&printed, &["tool"], 3);
        assert_eq!(
            handed.keys().copied().collect::<Vec<_>>(),
            [stored.nth(0), stored.nth(1), stored.nth(2)],
            "the tool's first ids"
        );
        assert_eq!(
            self.peek::<C>(bare).await,
            Some(stored.nth(2)),
            "last_reserved: the tool's last id"
        );

        let mut one = C::titled("seqid-0");
        let id = id_of::<C>(one.insert(bare).await.unwrap());
        let mut two = [C::titled("seqid-1"), C::titled("seqid-2")];
        let ids: Vec<i64> = C::insert_many(&mut two, &handle)
            .await
            .unwrap()
            .into_iter()
            .map(id_of::<C>)
            .collect();
        assert_eq!(
            [id, ids[0], ids[1]],
            [stored.nth(3), stored.nth(4), stored.nth(5)],
            "seqid goes on right after the tool"
        );
        hand(
            &mut handed,
            [(id, "seqid-0"), (ids[0], "seqid-1"), (ids[1], "seqid-2")]
                .map(|(id, title)| (id, title.to_owned())),
        );
        assert_eq!(self.peek::<C>(bare).await, Some(stored.nth(5)));
        let mut blocked = B::titled("seqid-block");
        let id = id_of::<B>(blocked.insert(&handle).await.unwrap());
        assert_eq!(id, stored.nth(6), "the block's first id");
        hand(&mut handed, [(id, "seqid-block".to_owned())]);
        let block = block_size::<B>();
        let reserved = stored.nth(5 + block);
        assert_eq!(
            self.peek::<B>(&handle).await,
            Some(reserved),
            "last_reserved: the block reserved"
        );
        assert_eq!(stored.counter_value(test).await, reserved);

        // An id written by other means, above the counter: `sync_counter` raises the
        // tool's value field to it.
        let explicit = stored.first_from_90();
        let mut document = stored.documents();
        document.insert(stored.field, explicit);
        document.insert(stored.title, "explicit");
        test.collection::<BsonDocument>(stored.collection)
            .insert_one(document)
            .await
            .unwrap();
        hand(&mut handed, [(explicit, "explicit".to_owned())]);
        assert_eq!(self.sync::<C>(bare).await, explicit, "sync_counter");
        let counter = stored.counter(test).await;
        self.assert_layout(&counter);
        self.assert_value_type(&counter);
        assert_eq!(
            counter.get(stored.value).and_then(integer),
            Some(explicit),
            "raised by sync_counter: {counter}"
        );
        assert_eq!(self.peek::<C>(&handle).await, Some(explicit));

        let printed = self.script.run(test, 1, &["after"]).await;
        assert_eq!(
            printed[0].get(self.printed),
            Some(&vec![explicit + stored.step]),
            "the tool goes on from the synced counter: {printed:?}"
        );
        hand(&mut handed, self.tool_handed(&printed, &["after"], 1));
        let counter = stored.counter(test).await;
        self.assert_layout(&counter);
        self.assert_value_type(&counter);
        assert_eq!(stored.stored(test).await, handed, "every document once");
    }

    /// Work-around for SecantusDB 0.7.0b3 only: it compares every option of an index
    /// asked for again with the one that exists, and refuses mongoose's `background: true`
    /// beside seqid's index without it (IndexKeySpecsConflict, 86), where MongoDB ignores
    /// `background` ("a creation time option only", `index_descriptor.cpp`), finds the two
    /// identical and answers that the index exists. There, once seqid has made the
    /// counter and its index, the index is dropped for the tool to make it itself; other
    /// servers keep seqid's.
    async fn let_the_tool_make_its_index_on_secantus(&self, test: &Database) {
        if let Some((name, _)) = &self.index
            && self.index_in_background
            && secantus()
        {
            test.collection::<BsonDocument>(self.stored.counters)
                .drop_index(*name)
                .await
                .unwrap();
        }
    }

    /// Whether [`side_by_side`](Case::side_by_side) lets seqid create the counter before
    /// the others write: where the writers cannot create it at once.
    fn counter_made_first(&self) -> bool {
        // Work-around for nx-27017 0.8.1 only: its unique indexes take two nulls for two
        // values (SQLite's NULL), so the tool's unique index on `{ id, reference_value }`
        // keeps no second counter `reference_value: null` out, and writers that create
        // the counter at once (seqid's insert, the tool's upsert) make one each, each
        // then counting from its own. MongoDB refuses the second null.
        let null_in_filter = self.stored.counter.values().any(|v| *v == Bson::Null);
        match self.creates {
            Creates::ByReadThenInsert => true,
            // Work-around for SecantusDB 0.7.0b3 only: of findAndModify upserts racing
            // on a new document (with each other, or with an insert), several may be
            // answered `updatedExisting: false` though one document was made, and some
            // with no document at all. MongoEngine then fails (`None` is not
            // subscriptable) and mongoose-sequence takes its first id, which another
            // writer also took. MongoDB lets one upsert insert and answers the others
            // with the document they matched.
            Creates::ByUpsert if secantus() => true,
            _ => nx() && null_in_filter,
        }
    }

    /// The ids a run of the tool printed for the sequence, each with its document's
    /// title (`<writer>-<i>`, in the order each process saved them); every process must
    /// have printed `n`.
    fn tool_handed(&self, printed: &[Printed], writers: &[&str], n: u32) -> Handed {
        let mut handed = Handed::new();
        for (process, writer) in printed.iter().zip(writers) {
            let ids = process.get(self.printed).map_or(&[][..], Vec::as_slice);
            assert_eq!(ids.len(), n as usize, "{writer} printed {process:?}");
            let titled = ids
                .iter()
                .enumerate()
                .map(|(i, id)| (*id, format!("{writer}-{i}")));
            hand(&mut handed, titled);
        }
        handed
    }

    /// Checks that the counter has the tool's fields and no other, that those that find
    /// it hold the values the tool's filter looks for (its `_id` an ObjectId where the
    /// filter does not name it), and that its value is a number.
    fn assert_layout(&self, counter: &BsonDocument) {
        let stored = &self.stored;
        assert_eq!(keys(counter), self.fields, "the tool's fields: {counter}");
        for (key, value) in &stored.counter {
            assert_eq!(counter.get(key), Some(value), "{key}: {counter}");
        }
        if !stored.counter.contains_key("_id") {
            assert!(
                matches!(counter.get("_id"), Some(Bson::ObjectId(_))),
                "an ObjectId _id, as the tool's: {counter}"
            );
        }
        if let Some(version) = counter.get("__v") {
            assert_eq!(
                version,
                &Bson::Int32(0),
                "mongoose's version key: {counter}"
            );
        }
        let value = counter.get(stored.value);
        assert!(
            value.and_then(integer).is_some(),
            "{}: a number a tool reads (Int32, Int64, whole Double): {counter}",
            stored.value
        );
    }

    /// Checks that the counter's value has the type the tool itself writes it with.
    fn assert_value_type(&self, counter: &BsonDocument) {
        // nx-27017 0.8.1 hands small Int64 values back as Int32 (see `stored_writes` in
        // `support`): there an Int64 cannot be told from an Int32.
        let expected = if nx() {
            ElementType::Int32
        } else {
            self.value_type
        };
        let value = counter.get(self.stored.value);
        assert_eq!(
            value.map(Bson::element_type),
            Some(expected),
            "{}: typed as the tool types it: {counter}",
            self.stored.value
        );
    }

    /// `M::last_reserved`, in the case's scope.
    async fn peek<M: Shared>(&self, db: &impl AsDatabase) -> Option<i64> {
        let peek = M::sequence().last_reserved(db);
        let peek = match self.stored.scope {
            Some((_, value)) => peek.scope_unchecked(value),
            None => peek,
        };
        peek.await.unwrap()
    }

    /// `M::sync_counter`, in the case's scope.
    async fn sync<M: Shared>(&self, db: &impl AsDatabase) -> i64 {
        let sync = M::sequence().sync_counter(db);
        let sync = match self.stored.scope {
            Some((_, value)) => sync.scope_unchecked(value),
            None => sync,
        };
        sync.await.unwrap()
    }
}

/// Adds `ids` to `handed`, failing on an id handed out twice.
fn hand(handed: &mut Handed, ids: impl IntoIterator<Item = (i64, String)>) {
    for (id, title) in ids {
        if let Some(first) = handed.get(&id) {
            panic!("id {id} handed out twice: for {first:?} and for {title:?}");
        }
        handed.insert(id, title);
    }
}

/// The block size of a block model.
fn block_size<B: Shared>() -> i64 {
    match B::SEQUENCE.strategy {
        Strategy::Block { block_size, .. } => block_size.into(),
        other => panic!("{} is not a block model: {other:?}", B::SEQUENCE.name),
    }
}

/// The largest id the block model `B` reserved through `handle`, whose tasks got `ids`:
/// the end of its last block, i.e. the largest id it handed out and then what is left of
/// that block, `step` apart. Checks the handle's stats first: it handed out `ids` and
/// reserved whole blocks.
fn block_end<B: Shared>(handle: &seqid::Database, ids: &BTreeSet<i64>, step: i64) -> i64 {
    let stats = B::sequence().stats(handle);
    let size = block_size::<B>();
    assert_eq!(stats.ids, ids.len() as u64, "the handle's ids: {stats:?}");
    assert_eq!(
        (stats.ids + stats.unused) as i64 % size,
        0,
        "whole blocks of {size}: {stats:?}"
    );
    ids.last().unwrap() + stats.unused as i64 * step
}

/// How a seqid task reaches the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    Handle,
    Bare,
}

/// How a seqid task inserts: one document a call, or [`BATCH`] a call.
#[derive(Clone, Copy, Debug)]
enum Call {
    Insert,
    InsertMany,
}

/// What one seqid task was told: each id with its document's title.
struct Task {
    via: Via,
    block: bool,
    ids: Vec<(i64, String)>,
}

/// What seqid's tasks were told, together.
struct Written {
    ids: Handed,
    /// The ids the block model's tasks got through the handle.
    block_via_handle: BTreeSet<i64>,
}

impl Written {
    /// Waits for `tasks`; an id handed out to two of them fails.
    async fn of(tasks: Vec<JoinHandle<Task>>) -> Self {
        let mut written = Written {
            ids: Handed::new(),
            block_via_handle: BTreeSet::new(),
        };
        for task in tasks {
            let task = task.await.expect("a seqid task panicked");
            if task.block && task.via == Via::Handle {
                written
                    .block_via_handle
                    .extend(task.ids.iter().map(|(id, _)| *id));
            }
            hand(&mut written.ids, task.ids);
        }
        written
    }
}

/// Spawns sixteen tasks, eight per model (`C` with counters, `B` with blocks): through
/// `handle` and through `bare`, by `insert` and by `insert_many`, of unique documents
/// (`<label>-<model>-<via>-<call>-<i>`) and of equal ones ([`EQUAL`]), each making
/// [`CALLS`] calls.
fn spawn_writers<C: Shared, B: Shared>(
    label: &str,
    handle: &seqid::Database,
    bare: &Database,
) -> Vec<JoinHandle<Task>> {
    let mut tasks = spawn_model::<C>(label, false, handle, bare);
    tasks.extend(spawn_model::<B>(label, true, handle, bare));
    tasks
}

fn spawn_model<M: Shared>(
    label: &str,
    block: bool,
    handle: &seqid::Database,
    bare: &Database,
) -> Vec<JoinHandle<Task>> {
    let model = if block { "block" } else { "counters" };
    let mut tasks = Vec::new();
    for via in [Via::Handle, Via::Bare] {
        for call in [Call::Insert, Call::InsertMany] {
            for equal in [false, true] {
                let per_call = match call {
                    Call::Insert => 1,
                    Call::InsertMany => BATCH,
                };
                let titles: Vec<String> = (0..CALLS * per_call)
                    .map(|i| match equal {
                        true => EQUAL.to_owned(),
                        false => format!("{label}-{model}-{via:?}-{call:?}-{i}"),
                    })
                    .collect();
                let (handle, bare) = (handle.clone(), bare.clone());
                tasks.push(tokio::spawn(async move {
                    let ids = match via {
                        Via::Handle => write::<M>(&handle, call, titles).await,
                        Via::Bare => write::<M>(&bare, call, titles).await,
                    };
                    Task { via, block, ids }
                }));
            }
        }
    }
    tasks
}

/// Inserts a document titled by each of `titles` with `call`, and returns the ids
/// seqid returned, each with its document's title.
async fn write<M: Shared>(
    db: &impl AsDatabase,
    call: Call,
    titles: Vec<String>,
) -> Vec<(i64, String)> {
    let mut ids = Vec::new();
    match call {
        Call::Insert => {
            for title in titles {
                let mut doc = M::titled(&title);
                let id = doc
                    .insert(db)
                    .await
                    .unwrap_or_else(|e| panic!("{title}: {e}"));
                ids.push((id_of::<M>(id), title));
            }
        }
        Call::InsertMany => {
            for batch in titles.chunks(BATCH) {
                let mut docs: Vec<M> = batch.iter().map(|t| M::titled(t)).collect();
                let got = M::insert_many(&mut docs, db)
                    .await
                    .unwrap_or_else(|e| panic!("{batch:?}: {e}"));
                assert_eq!(got.len(), batch.len());
                ids.extend(got.into_iter().map(id_of::<M>).zip(batch.iter().cloned()));
            }
        }
    }
    ids
}

/// Runs `$run` of MongoEngine's [`Case`] on `$test`. On nx-27017, whose collection names
/// cannot hold a dot, MongoEngine (`collection_name=`, through the script's
/// MONGOENGINE_COUNTERS) and seqid (`counters = "..."`) both keep the counter in
/// `mongoengine_counters`; every other server gets the layout's default,
/// `mongoengine.counters`. (A macro: the two cases are of different model types.)
macro_rules! mongoengine_case {
    ($test:expr, $run:ident) => {
        if nx() {
            let case =
                mongoengine::<NxMongoEngineUser, NxMongoEngineUserBlock>("mongoengine_counters");
            case.$run($test).await;
        } else {
            let case = mongoengine::<MongoEngineUser, MongoEngineUserBlock>("mongoengine.counters");
            case.$run($test).await;
        }
    };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn mongoengine_and_seqid_write_one_sequence_at_once() {
    let test = test_db("shared_mongoengine_at_once").await;
    mongoengine_case!(&test, side_by_side);
}

#[tokio::test]
async fn mongoengine_goes_on_from_a_counter_seqid_created() {
    let test = test_db("shared_mongoengine_after_seqid").await;
    mongoengine_case!(&test, tool_after_seqid);
}

#[tokio::test]
#[ignore = "full suite"]
async fn seqid_goes_on_from_a_counter_mongoengine_created() {
    let test = test_db("shared_mongoengine_before_seqid").await;
    mongoengine_case!(&test, seqid_after_tool);
}

// mongoose-sequence: the unscoped `ticket_seq`, and `issue_seq` per project. nx-27017
// 0.8.1 cannot match a field against an embedded document, which the scoped counter's
// filter `{ id, reference_value: { project } }` does (see `other_tools`): there the
// plugin itself fails on the scoped sequence, so only the unscoped one runs.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn mongoose_sequence_and_seqid_write_one_sequence_at_once() {
    let test = test_db("shared_mongoose_sequence_at_once").await;
    tickets::<Ticket, TicketBlock>(1).side_by_side(&test).await;
    if !nx() {
        issues().side_by_side(&test).await;
    }
}

#[tokio::test]
async fn mongoose_sequence_goes_on_from_a_counter_seqid_created() {
    let test = test_db("shared_mongoose_sequence_after_seqid").await;
    tickets::<Ticket, TicketBlock>(1)
        .tool_after_seqid(&test)
        .await;
    if !nx() {
        issues().tool_after_seqid(&test).await;
    }
}

#[tokio::test]
#[ignore = "full suite"]
async fn seqid_goes_on_from_a_counter_mongoose_sequence_created() {
    let test = test_db("shared_mongoose_sequence_before_seqid").await;
    tickets::<Ticket, TicketBlock>(1)
        .seqid_after_tool(&test)
        .await;
    if !nx() {
        issues().seqid_after_tool(&test).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn mongoose_auto_increment_and_seqid_write_one_sequence_at_once() {
    let test = test_db("shared_mongoose_auto_increment_at_once").await;
    books().side_by_side(&test).await;
}

#[tokio::test]
async fn mongoose_auto_increment_goes_on_from_a_counter_seqid_created() {
    let test = test_db("shared_mongoose_auto_increment_after_seqid").await;
    books().tool_after_seqid(&test).await;
}

#[tokio::test]
async fn seqid_goes_on_from_a_counter_mongoose_auto_increment_created() {
    let test = test_db("shared_mongoose_auto_increment_before_seqid").await;
    books().seqid_after_tool(&test).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn typegoose_and_seqid_write_one_sequence_at_once() {
    let test = test_db("shared_typegoose_at_once").await;
    orders::<Order, OrderBlock>(1).side_by_side(&test).await;
}

#[tokio::test]
async fn typegoose_goes_on_from_a_counter_seqid_created() {
    let test = test_db("shared_typegoose_after_seqid").await;
    orders::<Order, OrderBlock>(1).tool_after_seqid(&test).await;
}

#[tokio::test]
#[ignore = "full suite"]
async fn seqid_goes_on_from_a_counter_typegoose_created() {
    let test = test_db("shared_typegoose_before_seqid").await;
    orders::<Order, OrderBlock>(1).seqid_after_tool(&test).await;
}

/// mongoose-sequence with `inc_amount: 3` and seqid with `step = 3`: ids 1, 4, 7, ...
/// from either side, in the three scenarios.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn mongoose_sequence_and_seqid_share_a_step_of_3() {
    let case = tickets::<TicketStep3, TicketStep3Block>(3);
    case.in_every_scenario("shared_step_mongoose_sequence")
        .await;
}

/// @typegoose/auto-increment with `incrementBy: 5` and seqid with `step = 5`: ids 0, 5,
/// 10, ... from either side, in the three scenarios.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn typegoose_and_seqid_share_a_step_of_5() {
    let case = orders::<OrderStep5, OrderStep5Block>(5);
    case.in_every_scenario("shared_step_typegoose").await;
}

/// Two sequences on the tutorial's layout number one collection at once, `odd` with
/// `step = 2` (1, 3, 5, ...) and `even` with `step = 2, start = 2` (2, 4, 6, ...), each
/// written by sixteen tasks (see [`spawn_writers`]), all thirty-two at once: every id has
/// its sequence's parity and is handed out once, every document is stored once under its
/// id, and each counter is at the largest id its sequence reserved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_and_even_sequences_interleave_in_one_collection() {
    let test = test_db("shared_odd_even").await;
    let handle = shared(&test);
    let bare: Database = (*test).clone();
    let tutorial = |name: &str, first: i64| Stored {
        collection: "interleaved",
        field: "_id",
        title: "title",
        scope: None,
        counters: "counters",
        counter: doc! { "_id": name },
        value: "seq",
        first,
        step: 2,
    };
    let (odd, even) = (tutorial("odd", 1), tutorial("even", 2));
    let odd_tasks = spawn_writers::<Odd, OddBlock>("odd", &handle, &bare);
    let even_tasks = spawn_writers::<Even, EvenBlock>("even", &handle, &bare);
    let odd_written = Written::of(odd_tasks).await;
    let even_written = Written::of(even_tasks).await;

    odd.assert_in_progression(&odd_written.ids);
    even.assert_in_progression(&even_written.ids);
    let per_sequence = 2 * 2 * (2 * CALLS + 2 * CALLS * BATCH);
    assert_eq!(odd_written.ids.len(), per_sequence, "every odd insert");
    assert_eq!(even_written.ids.len(), per_sequence, "every even insert");
    let mut handed = odd_written.ids.clone();
    hand(&mut handed, even_written.ids.clone());
    // Both sequences' documents are in one collection, which `stored` reads whole.
    assert_eq!(
        odd.stored(&test).await,
        handed,
        "every document stored once, under the id its writer was told"
    );
    for (stored, written, block_end) in [
        (
            &odd,
            &odd_written,
            block_end::<OddBlock>(&handle, &odd_written.block_via_handle, 2),
        ),
        (
            &even,
            &even_written,
            block_end::<EvenBlock>(&handle, &even_written.block_via_handle, 2),
        ),
    ] {
        let last = (*written.ids.keys().max().unwrap()).max(block_end);
        let counter = stored.counter(&test).await;
        assert_eq!(keys(&counter), ["_id", "seq"], "the tutorial's layout");
        assert_eq!(
            counter.get("seq").and_then(integer),
            Some(last),
            "{}: at the largest id reserved",
            stored.counter
        );
    }
}
