//! The safety net of a counter that does not exist (issue 39): where the collection
//! already holds numbers of the sequence (in the scope) at or above its start, the first
//! `$inc` is refused before any id is taken ([`ErrorKind::CounterMissing`]), so that a wrong
//! counter name (another tool's default guessed wrong, a renamed sequence) never makes a
//! second counter that hands the numbers stored out again. Written once, run over the
//! strategies that keep a counter, scoped and not, through a handle and a bare database.

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::action::Transaction;
use seqid::error::ErrorKind;
use seqid::kind::WithCounter;
use seqid::{Document, Error};
use seqid_harness::{TestDb, test_db};

use crate::support::models::{BlockDoc, CountedDoc, GaplessDoc, Model, ScopedBlock, ScopedCounted};
use crate::support::transactions::without_transactions;
use crate::support::writers::Via;
use crate::support::{all_documents, counted_db, integer};

/// Stores `M::make("import", n)` with the driver, numbered `number`, as an import or
/// another writer would.
async fn import<M: Model>(test: &TestDb, n: u32, number: i64) {
    let mut stored = mongodb::bson::to_document(&M::make("import", n)).unwrap();
    stored.insert(M::SEQUENCE.field, number);
    if M::SEQUENCE.field != "_id" {
        stored.remove("_id");
    }
    test.collection::<BsonDocument>(M::SEQUENCE.collection)
        .insert_one(stored)
        .await
        .unwrap();
}

/// Inserts `doc` through `via`, in a transaction of its own (`Transaction`) for a
/// gapless sequence.
async fn insert<M: Model>(test: &TestDb, via: &Via, doc: M) -> Result<M, Error> {
    let mut docs = [doc];
    if M::SEQUENCE.strategy != seqid::Strategy::Gapless {
        via.insert(&mut docs, None).await?;
        let [doc] = docs;
        return Ok(doc);
    }
    let mut session = test.client().start_session().await.unwrap();
    let [doc] = docs;
    Transaction::new(&mut session)
        .run((via, doc), |session, (via, doc)| {
            Box::pin(async move {
                // A copy per run, so that a run again starts from the unset id.
                let mut docs = [doc.clone()];
                via.insert(&mut docs, Some(session)).await?;
                let [doc] = docs;
                Ok(doc)
            })
        })
        .await
}

/// The number the sequence gave `doc`.
fn number<M: Model>(doc: &M) -> i64 {
    let stored = mongodb::bson::to_document(doc).unwrap();
    integer(stored.get(M::SEQUENCE.field).unwrap_or(&Bson::Null)).unwrap()
}

/// The counters of the sequence, as stored.
async fn counters<M: Model>(test: &TestDb) -> Vec<BsonDocument> {
    all_documents(test, M::SEQUENCE.counters).await
}

/// Numbers 41 and 7 stored in the scope of a writer's first document (and, for a scoped
/// sequence, 90 in another scope), no counter: the insert is refused, naming 41, no counter
/// is made and nothing stored; another scope is numbered from 1; `sync_counter` starts the
/// counter above the numbers on purpose, and the next insert gets 42.
async fn refused_until_synced<M: Model<Kind: WithCounter>>(label: &str) {
    for via in ["handle", "bare"] {
        let test = test_db(&format!("{label}_{via}")).await;
        if M::SEQUENCE.strategy == seqid::Strategy::Gapless && without_transactions(&test).await {
            return;
        }
        let via = Via::on(via, test.client(), test.name()).unwrap();
        import::<M>(&test, 0, 41).await;
        import::<M>(&test, 0, 7).await;
        let scoped = !M::SEQUENCE.scope.is_empty();
        if scoped {
            // Project p1: another scope, with numbers of its own.
            import::<M>(&test, 1, 90).await;
        }
        let error = insert(&test, &via, M::make("seqid", 0)).await.unwrap_err();
        let ErrorKind::CounterMissing {
            largest,
            scope,
            counter,
            ..
        } = error.kind()
        else {
            panic!("{label}: expected CounterMissing, got {error:?}");
        };
        assert_eq!(error.sequence().map(|s| s.name), Some(M::SEQUENCE.name));
        assert_eq!(integer(largest), Some(41), "{error}");
        assert_eq!(scope.contains("p0"), scoped, "{error}");
        assert!(counter.contains(M::SEQUENCE.name), "{error}");
        let text = error.to_string();
        for words in ["no counter", "up to 41", "sync_counter", "no id was taken"] {
            assert!(text.contains(words), "{label}: {words:?} in {text}");
        }
        assert!(
            counters::<M>(&test).await.is_empty(),
            "{label}: no counter made"
        );
        let stored = 2 + usize::from(scoped);
        assert_eq!(
            all_documents(&test, M::SEQUENCE.collection).await.len(),
            stored,
            "{label}: nothing stored"
        );

        if scoped {
            // Project p2 holds no number: its counter is made, from 1.
            let other = insert(&test, &via, M::make("seqid", 2)).await.unwrap();
            assert_eq!(number(&other), 1, "{label}");
        }
        let synced = match scoped {
            true => {
                M::sequence()
                    .sync_counter(via.db())
                    .scope_unchecked("p0")
                    .await
            }
            false => M::sequence().sync_counter(via.db()).await,
        };
        assert_eq!(synced.unwrap(), 41, "{label}");
        let next = insert(&test, &via, M::make("seqid", 0)).await.unwrap();
        assert_eq!(number(&next), 42, "{label}: above the numbers stored");
    }
}

#[tokio::test]
async fn counters_refuse_to_make_a_counter_beside_numbers_stored() {
    refused_until_synced::<CountedDoc>("missing_counted").await;
}

#[tokio::test]
async fn block_refuses_to_make_a_counter_beside_numbers_stored() {
    refused_until_synced::<BlockDoc>("missing_block").await;
}

#[tokio::test]
async fn gapless_refuses_to_make_a_counter_beside_numbers_stored() {
    refused_until_synced::<GaplessDoc>("missing_gapless").await;
}

#[tokio::test]
async fn a_scope_with_numbers_and_no_counter_is_refused_and_others_numbered() {
    refused_until_synced::<ScopedCounted>("missing_scoped_counted").await;
    refused_until_synced::<ScopedBlock>("missing_scoped_block").await;
}

/// What does not count: numbers below the start, and numbers of another progression
/// (odd ids beside a sequence of even ones). The first id is then handed out as usual.
#[tokio::test]
async fn numbers_below_the_start_or_off_the_step_are_not_the_sequences() {
    #[derive(serde::Serialize, Document)]
    #[seq_id("from_1000", collection = "high", start = 1000)]
    struct High {
        #[serde(rename = "_id")]
        id: i64,
    }
    #[derive(serde::Serialize, Document)]
    #[seq_id("even", collection = "even", start = 2, step = 2)]
    struct Even {
        #[serde(rename = "_id")]
        id: i64,
    }
    let test = test_db("missing_not_ours").await;
    let db = crate::support::shared(&test);
    let high = test.collection::<BsonDocument>("high");
    high.insert_many([doc! { "_id": 5 }, doc! { "_id": 999_i64 }])
        .await
        .unwrap();
    assert_eq!(High { id: 0 }.insert(&db).await.unwrap(), 1000);
    let even = test.collection::<BsonDocument>("even");
    even.insert_many([
        doc! { "_id": 1 },
        doc! { "_id": 3_i64 },
        doc! { "_id": 5.0 },
    ])
    .await
    .unwrap();
    assert_eq!(Even { id: 0 }.insert(&db).await.unwrap(), 2);
    // An even number stored is the sequence's: refused on a fresh handle's first use.
    test.collection::<BsonDocument>("counters")
        .delete_one(doc! { "_id": "even" })
        .await
        .unwrap();
    let fresh = crate::support::shared(&test);
    match (Even { id: 0 })
        .insert(&fresh)
        .await
        .map_err(Error::into_kind)
    {
        Err(ErrorKind::CounterMissing { largest, .. }) => assert_eq!(integer(&largest), Some(2)),
        other => panic!("expected CounterMissing, got {other:?}"),
    }
}

/// The check costs nothing where the counter exists, and where it does not, two reads on
/// the first use only: the first `$inc` is sent without the upsert, and only when it
/// finds no counter are the counter and the collection read before the upsert makes it.
#[tokio::test]
async fn the_check_costs_two_reads_on_a_counters_first_use_only() {
    let (test, commands) = counted_db("missing_cost").await;
    let db = crate::support::shared(&test);
    let mut first = CountedDoc::make("seqid", 0);
    first.insert(&db).await.unwrap();
    // Through the harness's mongos (`SEQID_TEST_AS_MONGOS`), the first call also reads how
    // the collection and the counters collection are sharded: two `find`s on
    // `config.collections`, once per handle.
    let config_reads = if seqid_harness::as_mongos() { 2 } else { 0 };
    assert_eq!(
        (commands.count("findAndModify"), commands.count("find")),
        (2, 2 + config_reads),
        "a counter made: the `$inc` without the upsert, the counter and the numbers read, \
         the upsert"
    );
    commands.reset();
    for n in 1..4 {
        CountedDoc::make("seqid", n).insert(&db).await.unwrap();
    }
    assert_eq!(
        (commands.count("findAndModify"), commands.count("find")),
        (3, 0),
        "then one `$inc` per insert, and no read"
    );
    // A new handle (a restarted process) and a bare database, where the counter exists:
    // the first `$inc` finds it, with nothing more sent.
    commands.reset();
    let restarted = crate::support::shared(&test);
    CountedDoc::make("seqid", 4)
        .insert(&restarted)
        .await
        .unwrap();
    CountedDoc::make("seqid", 5)
        .insert(test.db())
        .await
        .unwrap();
    // (Through the harness's mongos, each reads how the collections are sharded once:
    // the new handle, and the process for its bare databases.)
    assert_eq!(
        (commands.count("findAndModify"), commands.count("find")),
        (2, 2 * config_reads)
    );
    let mut numbers: Vec<i64> = all_documents(&test, "multi_counters")
        .await
        .iter()
        .map(|d| integer(d.get("_id").unwrap()).unwrap())
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=6).collect::<Vec<_>>());
}

/// The wrong guess of the issue, with MongoEngine itself: `class Customer` numbers its
/// `id` with the counter `customer.id` (the collection is the class name in snake_case);
/// a Rust service that guesses `customers.id` is refused, with the tool's defaults in the
/// message, and the right name goes on from MongoEngine's last id.
#[tokio::test]
async fn a_wrong_guess_of_mongoengines_counter_name_is_refused() {
    /// `customer!(Name, "counter name", [more keys])`: MongoEngine's `Customer` from Rust.
    macro_rules! customer {
        ($name:ident, $counter:literal, [$($more:tt)*]) => {
            #[derive(serde::Serialize, Document)]
            #[seq_id($counter, collection = "customer", layout = "mongoengine" $($more)*)]
            struct $name {
                #[serde(rename = "_id")]
                id: i64,
                name: String,
            }
        };
    }
    customer!(WrongGuess, "customers.id", []);
    customer!(RightName, "customer.id", []);
    customer!(WrongGuessOnNx, "customers.id", [, counters = "mongoengine_counters"]);
    customer!(RightNameOnNx, "customer.id", [, counters = "mongoengine_counters"]);
    let test = test_db("missing_mongoengine").await;
    let db = crate::support::shared(&test);
    // nx-27017 0.8.1 refuses collection names with a dot (`mongoengine.counters`): there
    // the tool's counters collection is named by `collection_name=` (see `other_tools`).
    let nx = crate::support::tools::nx();
    let env = match nx {
        true => vec![
            ("MONGOENGINE_MODEL", "customer"),
            ("MONGOENGINE_COUNTERS", "mongoengine_counters"),
        ],
        false => vec![("MONGOENGINE_MODEL", "customer")],
    };
    let script = crate::support::tools::Script {
        tool: seqid_harness::Tool::MongoEngine,
        file: "mongoengine_users.py",
        env,
    };
    let printed = script.run(&test, 3, &["python"]).await;
    assert_eq!(printed[0]["customer"], [1, 2, 3]);

    let error = match nx {
        true => {
            WrongGuessOnNx {
                id: 0,
                name: "rust".into(),
            }
            .insert(&db)
            .await
        }
        false => {
            WrongGuess {
                id: 0,
                name: "rust".into(),
            }
            .insert(&db)
            .await
        }
    }
    .unwrap_err();
    let ErrorKind::CounterMissing { largest, .. } = error.kind() else {
        panic!("expected CounterMissing, got {error:?}");
    };
    assert_eq!(integer(largest), Some(3));
    let text = error.to_string();
    for words in [
        "customers.id",
        "up to 3",
        "`class Customer` gives `customer.id`",
        "sync_counter",
    ] {
        assert!(text.contains(words), "{words:?} in {text}");
    }
    let counters = match nx {
        true => "mongoengine_counters",
        false => "mongoengine.counters",
    };
    let stored = all_documents(&test, counters).await;
    assert_eq!(
        stored,
        [doc! { "_id": "customer.id", "next": 3 }],
        "no second counter"
    );

    let id = match nx {
        true => {
            RightNameOnNx {
                id: 0,
                name: "rust".into(),
            }
            .insert(&db)
            .await
        }
        false => {
            RightName {
                id: 0,
                name: "rust".into(),
            }
            .insert(&db)
            .await
        }
    };
    assert_eq!(id.unwrap(), 4, "the tool's counter, going on");
    assert_eq!(all_documents(&test, "customer").await.len(), 4);
}
