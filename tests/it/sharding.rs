//! Sharded clusters (issue 41): no mongos can be installed here, so the decisions are
//! tested where they are made. The harness's proxy presents the test server as a mongos
//! (its `hello` answers `msg: "isdbgrid"`) and answers `config.collections` with the
//! entries each test sets; seqid reads those and refuses, before any id is taken, a
//! sequence whose promise would not hold ([`ErrorKind::Sharded`]), lets the others through, and
//! reports both in `seqid::deployment::check`. Each refusal and each kind of pass of the guide's
//! matrix (*sharded clusters*) is a test, through a handle and through a bare database,
//! on both servers. What holds at a cost is reported, not refused.

use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::{Client, Database};
use seqid::action::Transaction;
use seqid::deployment::{Topology, Verdict};
use seqid::error::ErrorKind;
use seqid::{Document, Error, Model, Sequences};
use seqid_harness::{FaultProxy, TestDb, test_db};
use serde::{Deserialize, Serialize};

use crate::support::models::{BlockDoc, CountedDoc, GaplessDoc, Model as _, OptimisticDoc};

/// A test database reached through a proxy that presents its server as a mongos.
struct Mongos {
    test: TestDb,
    proxy: FaultProxy,
    client: Client,
}

impl Mongos {
    async fn start(label: &str) -> Mongos {
        let test = test_db(label).await;
        // In front of the server itself, also when the whole suite runs through the
        // harness's mongos proxy (`SEQID_TEST_AS_MONGOS`): this one's mode is the test's.
        let proxy = match seqid_harness::mongos_proxy_for(&test) {
            Some(mongos) => FaultProxy::start(mongos.upstream()).await.unwrap(),
            None => FaultProxy::for_test_db(&test).await.unwrap(),
        };
        proxy.present_as_mongos(true);
        let client = Client::with_uri_str(proxy.uri()).await.unwrap();
        Mongos {
            test,
            proxy,
            client,
        }
    }

    /// `collection` of the test database, sharded on `key` from now on.
    fn shard(&self, collection: &str, key: BsonDocument) {
        let namespace = format!("{}.{collection}", self.test.name());
        self.proxy
            .shard_collection(&namespace, doc! { "key": key, "unique": false });
    }

    /// Through a handle of its own (each call: a fresh handle, which reads afresh).
    fn handle(&self) -> seqid::Database {
        Sequences::new(&self.client).database(self.test.name())
    }

    /// Through a bare database.
    fn bare(&self) -> Database {
        self.client.database(self.test.name())
    }
}

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id(collection = "sh_tickets")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<mongodb::bson::oid::ObjectId>,
    project: String,
    #[seq_id("sh_ticket", scope = "project", strategy = "optimistic")]
    number: i64,
}

/// mongoose-sequence's layout, unscoped (`reference_value: null`): nx-27017 refuses a
/// filter on a subdocument value, which a scoped counter of this layout holds.
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("sh_issue", collection = "sh_issues", layout = "mongoose-sequence")]
struct Issue {
    #[serde(rename = "_id")]
    id: i64,
    project: String,
}

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("Order", collection = "sh_orders", layout = "typegoose", start = 1)]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
}

/// Inserts `doc` through a handle or a bare database.
async fn insert<T: Document + Serialize + Send + Sync>(
    at: &Mongos,
    bare: bool,
    doc: &mut T,
) -> Result<(), Error> {
    match bare {
        false => doc.insert(&at.handle()).await.map(drop),
        true => doc.insert(&at.bare()).await.map(drop),
    }
}

/// How many documents `collection` holds, read directly.
async fn count(at: &Mongos, collection: &str) -> u64 {
    at.test
        .collection::<BsonDocument>(collection)
        .count_documents(doc! {})
        .await
        .unwrap()
}

/// Asserts that `result` is the refusal of `collection` sharded on `key`, whose message
/// names them and says what would make the promise hold (`fix`).
fn assert_refused(result: Result<(), Error>, at: &Mongos, collection: &str, key: &str, fix: &str) {
    let error = match result {
        Err(error) if matches!(error.kind(), ErrorKind::Sharded { .. }) => error,
        other => panic!("{collection} sharded on {key}: expected a refusal, got {other:?}"),
    };
    let ErrorKind::Sharded {
        collection: named,
        shard_key,
        ..
    } = error.kind()
    else {
        unreachable!()
    };
    assert_eq!(&**named, format!("{}.{collection}", at.test.name()));
    assert_eq!(&**shard_key, key);
    let message = error.to_string();
    assert!(message.contains(fix), "{message}");
    assert!(message.contains(key), "{message}");
}

/// The optimistic strategy rests on its unique index: refused where the shard key does not
/// start it, before anything is read or written (no maximum query, no insert), through a
/// handle and bare; unscoped on `_id` and scoped on `{ project, number }`.
#[tokio::test]
async fn optimistic_is_refused_where_the_shard_key_does_not_start_its_index() {
    let at = Mongos::start("sh_opt_refused").await;
    let optimistic = OptimisticDoc::SEQUENCE.collection;
    at.shard(optimistic, doc! { "writer": 1 });
    at.shard("sh_tickets", doc! { "number": 1 });
    for bare in [false, true] {
        // `find`s the server saw: the proxy answers `config.collections` itself.
        let finds = || at.proxy.requests("find") - at.proxy.config_reads();
        let (found, inserts) = (finds(), at.proxy.requests("insert"));
        let mut user = OptimisticDoc::make("a", 0);
        let refused = insert(&at, bare, &mut user).await;
        assert_refused(
            refused,
            &at,
            optimistic,
            "{ \"writer\": 1 }",
            "shard the collection on { _id: 1 }",
        );
        assert_eq!(user.id, 0, "no id taken");
        let mut ticket = Ticket {
            id: None,
            project: "apollo".into(),
            number: 0,
        };
        let refused = insert(&at, bare, &mut ticket).await;
        assert_refused(
            refused,
            &at,
            "sh_tickets",
            "{ \"number\": 1 }",
            "shard the collection on { project: 1, number: 1 }",
        );
        assert_eq!(ticket.number, 0);
        // The config reads go to the proxy, not the server: nothing of the sequence sent.
        assert_eq!(at.proxy.requests("insert"), inserts, "bare {bare}");
        assert_eq!(finds(), found, "bare {bare}");
    }
    assert_eq!(count(&at, optimistic).await, 0);
    assert_eq!(count(&at, "sh_tickets").await, 0);
}

/// A step of a plan, numbered in its array.
#[derive(Debug, Serialize, Deserialize, seqid::Item)]
struct Step {
    #[seq_no]
    no: i64,
}

/// An optimistic type with items: its appends pass the same gate as its inserts.
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("sh_plan", collection = "sh_plans", strategy = "optimistic")]
struct Plan {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "steps_last")]
    steps: Vec<Step>,
    steps_last: i64,
}

/// An append runs in the call's context as every action does (issue 57): where its type's
/// sequence is refused, its append is refused too, before anything is sent, through a
/// handle and bare.
#[tokio::test]
async fn an_append_is_refused_where_its_type_s_sequence_is() {
    let at = Mongos::start("sh_append_refused").await;
    at.shard("sh_plans", doc! { "email": 1 });
    for bare in [false, true] {
        let sent = || {
            let finds = at.proxy.requests("find") - at.proxy.config_reads();
            (
                finds,
                at.proxy.requests("findAndModify"),
                at.proxy.requests("update"),
            )
        };
        let before = sent();
        let mut steps = vec![Step { no: 0 }, Step { no: 0 }];
        let filter = doc! { "_id": 1 };
        let refused = match bare {
            false => Plan::append_steps(&at.handle(), filter, &mut steps).await,
            true => Plan::append_steps(&at.bare(), filter, &mut steps).await,
        };
        assert_refused(
            refused.map(drop),
            &at,
            "sh_plans",
            "{ \"email\": 1 }",
            "shard the collection on { _id: 1 }",
        );
        assert!(steps.iter().all(|step| step.no == 0), "no number written");
        assert_eq!(sent(), before, "nothing of the append sent, bare {bare}");
    }
    assert_eq!(count(&at, "sh_plans").await, 0);
}

/// The optimistic strategy holds where the shard key starts its index: `_id` ranged or
/// hashed; the scope, hashed or ranged, or the whole index. Numbered 1, 2, 3 as
/// unsharded.
#[tokio::test]
async fn optimistic_holds_where_the_shard_key_starts_its_index() {
    for (n, (unscoped, scoped)) in [
        (doc! { "_id": 1 }, doc! { "project": 1 }),
        (doc! { "_id": "hashed" }, doc! { "project": "hashed" }),
        (doc! { "_id": "hashed" }, doc! { "project": 1, "number": 1 }),
    ]
    .into_iter()
    .enumerate()
    {
        let at = Mongos::start(&format!("sh_opt_holds{n}")).await;
        Ticket::create_indexes(&at.bare()).await.unwrap();
        at.shard(OptimisticDoc::SEQUENCE.collection, unscoped.clone());
        at.shard("sh_tickets", scoped.clone());
        for (i, bare) in [false, true, false].into_iter().enumerate() {
            let mut user = OptimisticDoc::make("u", i as u32);
            insert(&at, bare, &mut user).await.unwrap();
            assert_eq!(user.id, i as i64 + 1, "{unscoped}");
            let mut ticket = Ticket {
                id: None,
                project: "apollo".into(),
                number: 0,
            };
            insert(&at, bare, &mut ticket).await.unwrap();
            assert_eq!(ticket.number, i as i64 + 1, "{scoped}");
        }
    }
}

/// A counter's update must carry the counters collection's shard key: refused where its
/// filter does not (the tutorial's `{ _id }` under a key on `seq`; mongoose-sequence's `{ id,
/// reference_value }` under `reference_value`, which does not start its unique index), for
/// counters, block, and gapless (inside a transaction), before the counter is touched.
#[tokio::test]
async fn a_counter_whose_filter_does_not_carry_the_shard_key_is_refused() {
    let at = Mongos::start("sh_counter_refused").await;
    at.shard("counters", doc! { "seq": 1 });
    for bare in [false, true] {
        let mut user = CountedDoc::make("a", 0);
        let refused = insert(&at, bare, &mut user).await;
        assert_refused(
            refused,
            &at,
            "counters",
            "{ \"seq\": 1 }",
            "shard the counters collection on { _id: 1 }",
        );
        let mut blocked = BlockDoc::make("a", 0);
        let refused = insert(&at, bare, &mut blocked).await;
        assert_refused(
            refused,
            &at,
            "counters",
            "{ \"seq\": 1 }",
            "leave it unsharded",
        );
        let mut issue = Issue {
            id: 0,
            project: "apollo".into(),
        };
        let refused = insert(&at, bare, &mut issue).await;
        assert_refused(
            refused,
            &at,
            "counters",
            "{ \"seq\": 1 }",
            "found by { id: 1, reference_value: 1 }",
        );
    }
    at.shard("counters", doc! { "reference_value": 1 });
    let mut issue = Issue {
        id: 0,
        project: "apollo".into(),
    };
    let refused = insert(&at, false, &mut issue).await;
    assert_refused(
        refused,
        &at,
        "counters",
        "{ \"reference_value\": 1 }",
        "the unique index on { id: 1, reference_value: 1 }",
    );
    // mongoose-auto-increment's `{ model, field }`, unique on `{ field, model }`: a key on
    // `model` is in the filter but does not start the index.
    #[derive(Debug, Serialize, Deserialize, Document)]
    #[seq_id(
        "ShBook",
        collection = "sh_books",
        layout = "mongoose-auto-increment",
        start = 1
    )]
    struct Book {
        #[serde(rename = "_id")]
        id: i64,
    }
    at.shard("identitycounters", doc! { "model": 1 });
    let refused = insert(&at, true, &mut Book { id: 0 }).await;
    assert_refused(
        refused,
        &at,
        "identitycounters",
        "{ \"model\": 1 }",
        "the unique index on { field: 1, model: 1 }",
    );
    // Gapless, in a transaction: refused before its counter is read or taken.
    at.shard("counters", doc! { "seq": 1 });
    let mut session = at.client.start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let mut gapless = GaplessDoc::make("a", 0);
    let refused = gapless
        .insert(&at.handle())
        .session(&mut session)
        .await
        .map(drop);
    assert_refused(
        refused,
        &at,
        "counters",
        "{ \"seq\": 1 }",
        "leave it unsharded",
    );
    session.abort_transaction().await.unwrap();
    assert_eq!(count(&at, "counters").await, 0, "no counter made or taken");
    assert_eq!(count(&at, "identitycounters").await, 0, "no counter made");
    for collection in [
        CountedDoc::SEQUENCE.collection,
        BlockDoc::SEQUENCE.collection,
        "sh_issues",
        GaplessDoc::SEQUENCE.collection,
        "sh_books",
    ] {
        assert_eq!(count(&at, collection).await, 0, "{collection}");
    }
}

/// Counters hold where the filter carries the counters collection's shard key: `{ _id }`
/// under `_id` (hashed), mongoose-sequence under `id`, typegoose under `field` (which starts
/// its unique index `{ field, modelName }`). Numbered from 1, the counters where the tools
/// keep them; what it costs (one shard per counter) is reported, not refused.
#[tokio::test]
async fn counters_hold_where_the_filter_carries_the_shard_key() {
    let at = Mongos::start("sh_counter_holds").await;
    at.shard("counters", doc! { "_id": "hashed" });
    for (i, bare) in [false, true, false].into_iter().enumerate() {
        let mut user = CountedDoc::make("u", i as u32);
        insert(&at, bare, &mut user).await.unwrap();
        assert_eq!(user.id, i as i64 + 1);
        let mut blocked = BlockDoc::make("u", i as u32);
        insert(&at, bare, &mut blocked).await.unwrap();
    }
    let report = seqid::deployment::check(&at.handle())
        .of::<CountedDoc>()
        .await
        .unwrap();
    assert!(report.holds(), "{report}");
    assert_eq!(
        report.sequences[0].verdict,
        Verdict::HoldsAtACost,
        "{report}"
    );
    // The tools' layouts in a database of their own: a unique index on mongoose-sequence's
    // `{ id, reference_value }` cannot be made over the tutorial's counters above (all
    // null there).
    let at = Mongos::start("sh_counter_holds_tools").await;
    at.shard("counters", doc! { "id": 1 });
    at.shard("identitycounters", doc! { "field": 1 });
    for (i, bare) in [false, true].into_iter().enumerate() {
        let mut issue = Issue {
            id: 0,
            project: "apollo".into(),
        };
        insert(&at, bare, &mut issue).await.unwrap();
        assert_eq!(issue.id, i as i64 + 1);
        let mut order = Order { id: 0 };
        insert(&at, bare, &mut order).await.unwrap();
        assert_eq!(order.id, i as i64 + 1);
    }
    let report = seqid::deployment::check(&at.handle())
        .sequence(&Issue::SEQUENCE)
        .sequence(&Order::SEQUENCE)
        .await
        .unwrap();
    assert!(report.holds(), "{report}");
    let verdicts: Vec<Verdict> = report.sequences.iter().map(|s| s.verdict).collect();
    assert_eq!(
        verdicts,
        [Verdict::HoldsAtACost, Verdict::HoldsAtACost],
        "{report}"
    );
    // The tools' unique indexes on their counters, made by seqid at the first use.
    let counters = &report.collections;
    let index = |namespace: &str| {
        counters
            .iter()
            .find(|c| c.namespace.ends_with(namespace))
            .map(|c| {
                c.indexes
                    .iter()
                    .map(|i| (i.name.clone(), i.exists))
                    .collect::<Vec<_>>()
            })
    };
    assert_eq!(
        index(".counters"),
        Some(vec![("id_1_reference_value_1".to_owned(), true)]),
        "{report}"
    );
    assert_eq!(
        index(".identitycounters"),
        Some(vec![("field_1_modelName_1".to_owned(), true)]),
        "{report}"
    );
}

/// What holds at a cost is not refused: counters whose collection is sharded on another
/// field than `_id` lose their index's cluster-wide guard (a safety net), a ranged `_id`
/// key sends every insert to one shard, gapless across shards commits in two phases. The
/// check says each.
#[tokio::test]
async fn what_holds_at_a_cost_is_reported_not_refused() {
    let at = Mongos::start("sh_costs").await;
    at.shard(CountedDoc::SEQUENCE.collection, doc! { "writer": 1 });
    at.shard(BlockDoc::SEQUENCE.collection, doc! { "_id": 1 });
    insert(&at, false, &mut CountedDoc::make("a", 0))
        .await
        .unwrap();
    insert(&at, true, &mut BlockDoc::make("a", 0))
        .await
        .unwrap();
    let report = seqid::deployment::check(&at.handle())
        .sequence(&CountedDoc::SEQUENCE)
        .sequence(&BlockDoc::SEQUENCE)
        .await
        .unwrap();
    assert!(report.holds(), "{report}");
    let notes = |name: &str| -> Vec<String> {
        let sequence = report
            .sequences
            .iter()
            .find(|s| s.sequence == name)
            .unwrap();
        assert_eq!(sequence.verdict, Verdict::HoldsAtACost, "{report}");
        sequence.notes.iter().map(|n| n.text.clone()).collect()
    };
    assert!(
        notes(CountedDoc::SEQUENCE.name)
            .iter()
            .any(|n| n.contains("on each shard alone")),
        "{report}"
    );
    assert!(
        notes(BlockDoc::SEQUENCE.name)
            .iter()
            .any(|n| n.contains("last chunk")),
        "{report}"
    );
}

/// The check, for a deploy script or a health endpoint: the deployment, each collection
/// (once) with its shard key and the unique indexes relied on (missing until
/// `create_indexes`), each sequence's verdict; printable and serializable.
#[tokio::test]
async fn the_check_reports_the_deployment_its_collections_and_verdicts() {
    let at = Mongos::start("sh_check").await;
    let (optimistic, counted) = (OptimisticDoc::SEQUENCE, CountedDoc::SEQUENCE);
    at.shard(optimistic.collection, doc! { "writer": 1 });
    at.shard("sh_tickets", doc! { "project": "hashed" });
    let db = at.handle();
    let report = seqid::deployment::check(&db)
        .sequence(&OptimisticDoc::SEQUENCE)
        .sequence(&Ticket::SEQUENCE)
        .sequence(&CountedDoc::SEQUENCE)
        .await
        .unwrap();
    assert_eq!(report.topology, Topology::Sharded);
    assert!(!report.holds());
    let verdict = |name: &str| {
        report
            .sequences
            .iter()
            .find(|s| s.sequence == name)
            .unwrap()
            .verdict
    };
    assert_eq!(verdict(optimistic.name), Verdict::Refused);
    assert_eq!(verdict("sh_ticket"), Verdict::Holds);
    assert_eq!(verdict(counted.name), Verdict::Holds);
    let name = at.test.name();
    let namespaces: Vec<&str> = report
        .collections
        .iter()
        .map(|c| c.namespace.as_str())
        .collect();
    assert_eq!(
        namespaces,
        [
            format!("{name}.{}", optimistic.collection),
            format!("{name}.sh_tickets"),
            format!("{name}.{}", counted.collection),
            format!("{name}.counters"),
        ]
    );
    let tickets = &report.collections[1];
    assert_eq!(tickets.shard_key, Some(doc! { "project": "hashed" }));
    assert_eq!(tickets.indexes.len(), 1);
    assert_eq!(tickets.indexes[0].name, "project_1_number_1");
    assert!(!tickets.indexes[0].exists, "not made yet");
    assert_eq!(report.collections[2].shard_key, None);
    let shown = report.to_string();
    assert!(shown.contains("a sharded cluster"), "{shown}");
    assert!(
        shown.contains(&format!(
            "sequence {} (optimistic): REFUSED",
            optimistic.name
        )),
        "{shown}"
    );
    assert!(shown.contains("MISSING"), "{shown}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["topology"], "sharded");
    assert_eq!(json["sequences"][0]["verdict"], "refused");
    // Made, and found.
    Ticket::create_indexes(&db).await.unwrap();
    let report = seqid::deployment::check(&db).of::<Ticket>().await.unwrap();
    assert!(report.collections[0].indexes[0].exists, "{report}");
    assert!(report.holds());
}

/// Off a sharded cluster, nothing but one `hello` is read: no `config.collections`, and
/// every sequence holds, whatever the proxy would answer.
#[tokio::test]
async fn a_replica_set_or_a_standalone_server_reads_no_sharding() {
    let at = Mongos::start("sh_not_mongos").await;
    at.proxy.present_as_mongos(false);
    at.shard(OptimisticDoc::SEQUENCE.collection, doc! { "writer": 1 });
    let mut user = OptimisticDoc::make("a", 0);
    insert(&at, false, &mut user).await.unwrap();
    insert(&at, true, &mut OptimisticDoc::make("b", 0))
        .await
        .unwrap();
    let report = seqid::deployment::check(&at.handle())
        .of::<OptimisticDoc>()
        .await
        .unwrap();
    assert_ne!(report.topology, Topology::Sharded);
    assert!(report.holds());
    assert_eq!(report.sequences[0].verdict, Verdict::Holds);
    assert_eq!(at.proxy.config_reads(), 0);
}

/// A handle reads each collection's entry once, not at every insert.
#[tokio::test]
async fn a_handle_reads_how_a_collection_is_sharded_once() {
    let at = Mongos::start("sh_once").await;
    at.shard("counters", doc! { "_id": "hashed" });
    let db = at.handle();
    for i in 0..5 {
        CountedDoc::make("u", i).insert(&db).await.unwrap();
    }
    // The collection's and the counters collection's entries.
    assert_eq!(at.proxy.config_reads(), 2);
    // A new handle reads them again; the check always does.
    CountedDoc::make("again", 0)
        .insert(&at.handle())
        .await
        .unwrap();
    assert_eq!(at.proxy.config_reads(), 4);
    assert_eq!(
        crate::support::counter_value(&at.test, CountedDoc::SEQUENCE.name).await,
        Some(6)
    );
}

/// What holds at a cost is said in the log once per process, sequence and collection,
/// whatever the inserts and handles: a gapless sequence on a collection sharded on a
/// ranged `_id` (every insert to the last chunk's shard; counter and document possibly
/// apart, a two-phase commit). A model of this test's own, so that no other test has
/// logged it first.
#[tokio::test]
async fn what_holds_at_a_cost_is_logged_once() {
    #[derive(Debug, Serialize, Deserialize, Document)]
    #[seq_id("sh_logged", collection = "sh_logged", strategy = "gapless")]
    struct Logged {
        #[serde(rename = "_id")]
        id: i64,
    }
    let log = crate::support::log::Log::default();
    let _installed = log.install();
    let at = Mongos::start("sh_logged").await;
    at.shard("sh_logged", doc! { "_id": 1 });
    // Work-around for nx-27017 0.8.1 only: a transaction whose first command reads a
    // collection that does not exist yet is not begun there, and its commit is refused
    // ("No session specified"); MongoDB begins it. The collections made first.
    for collection in ["sh_logged", "counters"] {
        at.test.create_collection(collection).await.unwrap();
    }
    let mut session = at.client.start_session().await.unwrap();
    for n in 0..3 {
        let db = at.handle();
        let id = Transaction::new(&mut session)
            .run(&db, |session, db| {
                Box::pin(async move {
                    let mut doc = Logged { id: 0 };
                    doc.insert(*db).session(session).await?;
                    Ok::<_, seqid::Error>(doc.id)
                })
            })
            .await
            .unwrap();
        assert_eq!(id, n + 1);
    }
    let text = log.text();
    let said = |what: &str| text.lines().filter(|line| line.contains(what)).count();
    assert_eq!(said("the shard that holds the last chunk"), 1, "{text}");
    assert_eq!(said("commits in two phases"), 1, "{text}");
    assert!(
        text.contains(&format!(
            "`{}.sh_logged` is sharded on {{ \"_id\": 1 }}",
            at.test.name()
        )),
        "{text}"
    );
}

/// A number on its own (`db.sequence(..)`, issue 49) has no document collection: the gate
/// judges its counters collection alone (never reads a shard key for a collection named
/// ""), refuses a counter whose filter cannot carry that collection's shard key, and keeps
/// its decisions per sequence, so that the same name with another counters collection is
/// judged afresh; with `.collection(..)`, the documents' collection is judged as a declared
/// type's (a ranged key on `_id` costs, never refuses, a counted sequence).
#[tokio::test]
async fn a_number_on_its_own_is_judged_by_its_counters_collection() {
    use seqid::AsDatabase;
    let at = Mongos::start("sh_next").await;
    at.shard("sh_next_refused", doc! { "seq": 1 });
    at.shard("sh_next_hashed", doc! { "_id": "hashed" });
    at.shard("sh_next_docs", doc! { "_id": 1 });
    for bare in [false, true] {
        let (handle, plain) = (at.handle(), at.bare());
        let sequence = |counters: &str| match bare {
            true => plain.sequence("sh_next").counters(counters),
            false => handle.sequence("sh_next").counters(counters),
        };
        let inc = || at.proxy.requests("findAndModify");
        let before = inc();
        let refused = sequence("sh_next_refused").next().await.map(drop);
        assert_refused(
            refused,
            &at,
            "sh_next_refused",
            "{ \"seq\": 1 }",
            "shard the counters collection on { _id: 1 }",
        );
        assert_eq!(inc(), before, "no id taken, bare {bare}");
        let hashed = sequence("sh_next_hashed").next().await.unwrap();
        assert_eq!(hashed, [1, 2][usize::from(bare)]);
        assert_eq!(
            sequence("counters").next().await.unwrap(),
            [1, 3][usize::from(bare)]
        );
        let with_docs = sequence("counters").collection("sh_next_docs");
        assert_eq!(with_docs.next().await.unwrap(), [2, 4][usize::from(bare)]);
    }
}
