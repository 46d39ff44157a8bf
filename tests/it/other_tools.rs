//! Other tools that keep auto-increment counters in MongoDB, whose counters seqid is to
//! share (issue 28): MongoEngine's `SequenceField` (Python), mongoose-sequence,
//! mongoose-auto-increment and @typegoose/auto-increment (Node.js). Each runs for real,
//! in processes of its own, installed on first use by `seqid_harness::Tool` with every
//! version pinned; its script is in `tests/tools/`, run by `support::tools` (shared with
//! `shared_counters`, where each tool runs beside seqid). If `python3`, `node` or `npm`
//! is missing, the test fails saying what to install.
//!
//! These tests characterize each tool on the test server: one process saves 3
//! documents per sequence, then two processes at once save 5 each; the test then reads
//! the counter documents with the Rust driver and checks the layout that seqid must
//! share: the counters collection, the fields that identify a counter and their values,
//! the field that holds the value, its BSON type, and its value (the last id handed
//! out), the ids the documents got (1, 2, 3, ... or 0, 1, 2, ...), and that every
//! document is stored once. The layouts are those read from the tools' source
//! (issue 28's notes); where a server differs, the test says so.

use std::collections::BTreeSet;

use mongodb::Database;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid_harness::{Tool, test_db};

use crate::support::all_documents;
use crate::support::tools::{
    Script, assert_unique_index, create_identitycounters_on_secantus, ids_of, keys, nx,
};

/// `first..first + count`.
fn range(first: i64, count: i64) -> BTreeSet<i64> {
    (first..first + count).collect()
}

/// Checks that `collection` holds one document per id of `ids`, each with that id in
/// `field` as an Int32 (a JS number, or a small Python int, as the drivers write it),
/// and the titles `<writer>-<i>` of every writer (under `title_field`), each once.
async fn assert_stored_once(
    db: &Database,
    collection: &str,
    field: &str,
    title_field: &str,
    ids: &BTreeSet<i64>,
    titles: impl IntoIterator<Item = String>,
) -> Vec<BsonDocument> {
    let docs = all_documents(db, collection).await;
    let mut stored = BTreeSet::new();
    let mut stored_titles = BTreeSet::new();
    for d in &docs {
        match d.get(field) {
            Some(Bson::Int32(id)) => assert!(stored.insert(i64::from(*id)), "{d:?} twice"),
            other => panic!("{collection}: {field} is {other:?}, not an Int32, in {d:?}"),
        }
        let title = d.get_str(title_field).unwrap().to_owned();
        assert!(stored_titles.insert(title), "{d:?}: a title stored twice");
    }
    assert_eq!(&stored, ids, "{collection}: the ids stored");
    assert_eq!(
        stored_titles,
        titles.into_iter().collect::<BTreeSet<_>>(),
        "{collection}: every document stored once"
    );
    docs
}

/// `<writer>-<i>` for `i < n` and every writer.
fn titles(writers: &[&str], n: u32) -> Vec<String> {
    writers
        .iter()
        .flat_map(|w| (0..n).map(move |i| format!("{w}-{i}")))
        .collect()
}

/// MongoEngine 0.29.3, `id = SequenceField(primary_key=True)` on `User` (collection
/// `users`): one counter `{_id: "users.id", next}` in `mongoengine.counters`, `next` an
/// Int32 holding the last id handed out; ids from 1.
#[tokio::test]
#[ignore = "full suite"]
async fn mongoengine_sequence_field() {
    let test = test_db("other_tools_mongoengine").await;
    // nx-27017 0.8.1 refuses collection names with a dot (`mongoengine.counters`,
    // MongoEngine's default): there the counters collection is named by the field's
    // `collection_name=` instead, which changes nothing else (the counter's `_id` stays
    // "users.id"). Every other server gets MongoEngine's default.
    let nx = nx();
    let counters = if nx {
        "mongoengine_counters"
    } else {
        "mongoengine.counters"
    };
    let env = if nx {
        vec![("MONGOENGINE_COUNTERS", "mongoengine_counters")]
    } else {
        vec![]
    };
    let script = Script {
        tool: Tool::MongoEngine,
        file: "mongoengine_users.py",
        env,
    };

    let first = script.run(&test, 3, &["first"]).await;
    assert_eq!(ids_of(&first, "user"), range(1, 3), "the first ids");
    assert_eq!(first[0]["user"], [1, 2, 3], "in order, within one process");
    let counter = all_documents(&test, counters).await;
    assert_eq!(counter.len(), 1, "one counter: {counter:?}");
    assert_eq!(keys(&counter[0]), ["_id", "next"], "{counter:?}");
    assert_eq!(
        counter[0].get("_id"),
        Some(&Bson::String("users.id".into()))
    );
    assert_eq!(
        counter[0].get("next"),
        Some(&Bson::Int32(3)),
        "next: the last id handed out, an Int32"
    );
    assert_stored_once(
        &test,
        "users",
        "_id",
        "name",
        &range(1, 3),
        titles(&["first"], 3),
    )
    .await;

    let writers = ["a", "b"];
    let more = script.run(&test, 5, &writers).await;
    assert_eq!(ids_of(&more, "user"), range(4, 10), "two processes at once");
    let counter = all_documents(&test, counters).await;
    assert_eq!(counter, [doc! { "_id": "users.id", "next": 13_i32 }]);
    let mut all_titles = titles(&["first"], 3);
    all_titles.extend(titles(&writers, 5));
    assert_stored_once(&test, "users", "_id", "name", &range(1, 13), all_titles).await;
}

/// mongoose-sequence 6.0.1 (mongoose 8): collection `counters`, one document per
/// sequence and scope `{_id: ObjectId, id, reference_value, seq}`, `reference_value`
/// null when unscoped and `{project: <value>}` when scoped by `project`, `seq` an Int32
/// holding the last id handed out; ids from 1; a unique index on `{id, reference_value}`.
#[tokio::test]
#[ignore = "full suite"]
async fn mongoose_sequence() {
    let test = test_db("other_tools_mongoose_sequence").await;
    // nx-27017 0.8.1 cannot match a field against an embedded document, which the scoped
    // counters' filter `{id: "issue_seq", reference_value: {project: "apollo"}}` does:
    // `find` answers "Operator 'project' is not a valid query operation", and the
    // plugin's upsert with that filter stores `{_id, id: "issue_seq"}` alone (without
    // `reference_value` and `seq`), so its `$inc` then matches nothing and the save
    // fails ("Cannot read properties of null (reading 'seq')"). There, only the unscoped
    // sequence runs.
    let scoped = !nx();
    let env = if scoped {
        vec![]
    } else {
        vec![("MONGOOSE_SEQUENCE_SCOPED", "0")]
    };
    let script = Script {
        tool: Tool::MongooseSequence,
        file: "mongoose_sequence.js",
        env,
    };
    let projects: &[&str] = if scoped { &["apollo", "gemini"] } else { &[] };
    let check_counters = |counters: Vec<BsonDocument>, last: i32| {
        let mut scopes = Vec::new();
        for c in &counters {
            assert_eq!(keys(c), ["_id", "id", "reference_value", "seq"], "{c:?}");
            assert!(
                matches!(c.get("_id"), Some(Bson::ObjectId(_))),
                "an ObjectId _id: {c:?}"
            );
            assert_eq!(
                c.get("seq"),
                Some(&Bson::Int32(last)),
                "seq: the last id handed out, an Int32: {c:?}"
            );
            scopes.push((
                c.get_str("id").unwrap().to_owned(),
                c.get("reference_value").unwrap().clone(),
            ));
        }
        scopes.sort_by_key(|scope| format!("{scope:?}"));
        let mut expected = vec![("ticket_seq".to_owned(), Bson::Null)];
        for project in projects {
            expected.push(("issue_seq".into(), doc! { "project": *project }.into()));
        }
        expected.sort_by_key(|scope| format!("{scope:?}"));
        assert_eq!(scopes, expected, "one counter per sequence and scope");
    };
    let check_issues = |issues: Vec<BsonDocument>, ids: &BTreeSet<i64>, titles: &[String]| {
        assert_eq!(issues.len(), projects.len() * ids.len(), "{issues:?}");
        for project in projects {
            let mut numbers = BTreeSet::new();
            let mut stored_titles = BTreeSet::new();
            for d in issues
                .iter()
                .filter(|d| d.get_str("project") == Ok(project))
            {
                match d.get("number") {
                    Some(Bson::Int32(n)) => assert!(numbers.insert(i64::from(*n)), "{d:?}"),
                    other => panic!("number is {other:?}, not an Int32, in {d:?}"),
                }
                let title = d.get_str("title").unwrap().to_owned();
                assert!(stored_titles.insert(title), "{d:?}: a title stored twice");
            }
            assert_eq!(&numbers, ids, "{project}: the numbers stored");
            let titles: BTreeSet<_> = titles.iter().cloned().collect();
            assert_eq!(stored_titles, titles, "{project}: every issue stored once");
        }
    };

    let first = script.run(&test, 3, &["first"]).await;
    assert_eq!(first[0]["ticket"], [1, 2, 3], "ids from 1");
    for project in projects {
        let sequence = format!("issue/{project}");
        assert_eq!(
            first[0][&sequence],
            [1, 2, 3],
            "{sequence}: from 1, per project"
        );
    }
    assert_eq!(first[0].len(), 1 + projects.len(), "{first:?}");
    check_counters(all_documents(&test, "counters").await, 3);
    assert_unique_index(
        &test,
        "counters",
        "id_1_reference_value_1",
        doc! { "id": 1, "reference_value": 1 },
    )
    .await;
    let first_titles = titles(&["first"], 3);
    assert_stored_once(
        &test,
        "tickets",
        "_id",
        "title",
        &range(1, 3),
        first_titles.clone(),
    )
    .await;
    check_issues(
        all_documents(&test, "issues").await,
        &range(1, 3),
        &first_titles,
    );

    let writers = ["a", "b"];
    let more = script.run(&test, 5, &writers).await;
    assert_eq!(
        ids_of(&more, "ticket"),
        range(4, 10),
        "two processes at once"
    );
    for project in projects {
        let sequence = format!("issue/{project}");
        assert_eq!(
            ids_of(&more, &sequence),
            range(4, 10),
            "{sequence}: two at once"
        );
    }
    check_counters(all_documents(&test, "counters").await, 13);
    let mut all_titles = first_titles;
    all_titles.extend(titles(&writers, 5));
    assert_stored_once(
        &test,
        "tickets",
        "_id",
        "title",
        &range(1, 13),
        all_titles.clone(),
    )
    .await;
    check_issues(
        all_documents(&test, "issues").await,
        &range(1, 13),
        &all_titles,
    );
}

/// mongoose-auto-increment 5.0.1 (mongoose 6): collection `identitycounters`, one
/// document `{_id: ObjectId, model: "Book", field: "_id", count, __v: 0}` created when
/// the plugin is applied, `count` an Int32 holding the last id handed out; ids from 0;
/// a unique index on `{field, model}`.
#[tokio::test]
#[ignore = "full suite"]
async fn mongoose_auto_increment() {
    let test = test_db("other_tools_mongoose_auto_increment").await;
    let check_counter = |counter: Vec<BsonDocument>, last: i64| {
        assert_eq!(counter.len(), 1, "one counter: {counter:?}");
        let c = &counter[0];
        assert_eq!(keys(c), ["__v", "_id", "count", "field", "model"], "{c:?}");
        assert!(matches!(c.get("_id"), Some(Bson::ObjectId(_))), "{c:?}");
        assert_eq!(c.get_str("model"), Ok("Book"));
        assert_eq!(c.get_str("field"), Ok("_id"));
        assert_eq!(c.get("__v"), Some(&Bson::Int32(0)), "{c:?}");
        assert_eq!(
            c.get("count"),
            Some(&Bson::Int32(i32::try_from(last).unwrap())),
            "count: the last id handed out, an Int32"
        );
    };
    let books = FromZero {
        script: Script {
            tool: Tool::MongooseAutoIncrement,
            file: "mongoose_auto_increment.js",
            env: vec![],
        },
        sequence: "book",
        collection: "books",
        index: ("field_1_model_1", doc! { "field": 1, "model": 1 }),
    };
    books.run(&test, check_counter).await;
}

/// @typegoose/auto-increment 5.0.1's AutoIncrementID (mongoose 9): collection
/// `identitycounters`, one document `{_id: ObjectId, field: "_id", modelName: "Order",
/// count}` created at the first save, `count` an Int64 holding the last id handed out;
/// ids from 0; a unique index on `{field, modelName}`.
#[tokio::test]
#[ignore = "full suite"]
async fn typegoose_auto_increment() {
    let test = test_db("other_tools_typegoose_auto_increment").await;
    // nx-27017 0.8.1 hands small Int64 values back as Int32 (see `stored_writes` in
    // `support`): there the Int64 that the plugin writes (`count: Long(-1)` at creation,
    // then `$inc: {count: Long(1)}`) is read back as an Int32.
    let count = |last: i64| {
        if nx() {
            Bson::Int32(i32::try_from(last).unwrap())
        } else {
            Bson::Int64(last)
        }
    };
    let check_counter = |counter: Vec<BsonDocument>, last: i64| {
        assert_eq!(counter.len(), 1, "one counter: {counter:?}");
        let c = &counter[0];
        assert_eq!(keys(c), ["_id", "count", "field", "modelName"], "{c:?}");
        assert!(matches!(c.get("_id"), Some(Bson::ObjectId(_))), "{c:?}");
        assert_eq!(c.get_str("field"), Ok("_id"));
        assert_eq!(c.get_str("modelName"), Ok("Order"));
        assert_eq!(
            c.get("count"),
            Some(&count(last)),
            "count: the last id handed out, an Int64"
        );
    };
    let orders = FromZero {
        script: Script {
            tool: Tool::TypegooseAutoIncrement,
            file: "typegoose_auto_increment.js",
            env: vec![],
        },
        sequence: "order",
        collection: "orders",
        index: ("field_1_modelName_1", doc! { "field": 1, "modelName": 1 }),
    };
    orders.run(&test, check_counter).await;
}

/// A tool whose ids start at 0, with its counter in `identitycounters` (the two
/// mongoose-auto-increment plugins): what its test runs.
struct FromZero {
    script: Script,
    /// The sequence name its script prints.
    sequence: &'static str,
    /// The collection its documents go to.
    collection: &'static str,
    /// The unique index the tool makes on its counters: name and keys.
    index: (&'static str, BsonDocument),
}

impl FromZero {
    /// One process saves 3 documents, then two at once save 5 each: ids 0 to 12, each
    /// document stored once, and the counter (judged by `check_counter`, with the last
    /// id handed out) after each run.
    async fn run(self, test: &Database, check_counter: impl Fn(Vec<BsonDocument>, i64)) {
        create_identitycounters_on_secantus(test).await;
        let (script, collection) = (&self.script, self.collection);
        let first = script.run(test, 3, &["first"]).await;
        assert_eq!(first[0][self.sequence], [0, 1, 2], "ids from 0");
        check_counter(all_documents(test, "identitycounters").await, 2);
        let (name, keys) = self.index;
        assert_unique_index(test, "identitycounters", name, keys).await;
        let firsts = titles(&["first"], 3);
        assert_stored_once(test, collection, "_id", "title", &range(0, 3), firsts).await;

        let writers = ["a", "b"];
        let more = script.run(test, 5, &writers).await;
        assert_eq!(
            ids_of(&more, self.sequence),
            range(3, 10),
            "two processes at once"
        );
        check_counter(all_documents(test, "identitycounters").await, 12);
        let mut all_titles = titles(&["first"], 3);
        all_titles.extend(titles(&writers, 5));
        assert_stored_once(test, collection, "_id", "title", &range(0, 13), all_titles).await;
    }
}
