//! A number is its type's, however it is taken (issue 55, items 1-3): a type's numbers on
//! their own with the options it declares (`T::sequence().next(&db)`), and a sequence
//! named at run time with a declared name taking the declaration's options and refusing
//! those that differ, naming the type, before anything is read or written. Every model
//! here declares a name of its own, so that no other test's declaration meets it.

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::error::ErrorKind;
use seqid::{AsDatabase, Document, Error};
use seqid_harness::test_db;
use serde::{Deserialize, Serialize};

use crate::support::transactions::without_transactions;
use crate::support::{counter_value, integer, shared};

/// An order whose numbers start at 1001.
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("decl_order", collection = "decl_orders", start = 1001)]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    total: i64,
}

/// Gapless invoices numbered per year, an `i32`.
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id(collection = "decl_invoices")]
struct Invoice {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<mongodb::bson::oid::ObjectId>,
    year: i32,
    #[seq_id("decl_invoice", scope = "year", strategy = "gapless")]
    number: i64,
}

/// Block tickets per project, in a counters collection of their own.
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id(collection = "decl_tickets")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<mongodb::bson::oid::ObjectId>,
    project: String,
    #[seq_id(
        "decl_ticket",
        scope = "project",
        strategy = "block",
        block_size = 10,
        // One block, counted exactly; a call by name takes this too.
        prefetch = false,
        counters = "decl_sequences"
    )]
    number: i64,
}

/// Two types declaring one counter with different starts: a program's own contradiction.
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("decl_twice", collection = "decl_twice_a")]
struct TwiceA {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("decl_twice", collection = "decl_twice_b", start = 500)]
struct TwiceB {
    #[serde(rename = "_id")]
    id: i64,
}

/// `error`'s option, and its message, for an `InvalidOption`.
fn refused_option(error: &Error) -> (&'static str, String) {
    match error.kind() {
        ErrorKind::InvalidOption { option, .. } => (*option, error.to_string()),
        other => panic!("not InvalidOption: {other:?}"),
    }
}

#[tokio::test]
async fn the_declared_start_holds_however_the_first_number_is_taken() {
    let test = test_db("decl_start").await;
    let handle = shared(&test);
    // The first call on a fresh database is a number on its own, by name: it starts the
    // counter where the type says (before, 1, and the counter made at 0, for good).
    assert_eq!(test.sequence("decl_order").next().await.unwrap(), 1001);
    assert_eq!(Order::sequence().next(&*test).await.unwrap(), 1002);
    assert_eq!(Order::sequence().next(&handle).await.unwrap(), 1003);
    assert_eq!(
        handle.sequence("decl_order").next_n(2).await.unwrap(),
        [1004, 1005]
    );
    assert_eq!(Order::reserve_id(&handle).await.unwrap().id(), 1006);
    let mut order = Order { id: 0, total: 7 };
    assert_eq!(order.insert(&handle).await.unwrap(), 1007);
    assert_eq!(counter_value(&test, "decl_order").await, Some(1007));

    // The typed call on a fresh counter starts it too.
    let fresh = test_db("decl_start_typed").await;
    assert_eq!(
        Order::sequence().next_n(&*fresh, 2).await.unwrap(),
        [1001, 1002]
    );

    // A start that differs from the declaration's is refused, naming the type; nothing
    // taken.
    let error = test
        .sequence("decl_order")
        .start(1)
        .next()
        .await
        .unwrap_err();
    let (option, message) = refused_option(&error);
    assert_eq!(option, "start");
    assert!(message.contains("declared::Order"), "{message}");
    assert!(message.contains("start = 1001"), "{message}");
    assert_eq!(error.sequence().map(|s| s.name), Some("decl_order"));
    // The start the type declares, given, is the declaration's: taken.
    let id = test
        .sequence("decl_order")
        .start(1001)
        .next()
        .await
        .unwrap();
    assert_eq!(id, 1008);
    assert_eq!(counter_value(&test, "decl_order").await, Some(1008));
}

#[tokio::test]
async fn another_strategy_or_a_misspelled_name_is_refused_before_anything_is_taken() {
    let test = test_db("decl_strategy").await;
    let handle = shared(&test);
    assert_eq!(Order::sequence().next(&handle).await.unwrap(), 1001);

    // A block of 100 beside a counters type would take 100 numbers at once.
    let error = handle.sequence("decl_order").block(100).next().await;
    let (option, message) = refused_option(&error.unwrap_err());
    assert_eq!(option, "strategy");
    assert!(message.contains("block(100)"), "{message}");
    assert!(message.contains("strategy = counters"), "{message}");
    let error = test.sequence("decl_order").gapless().next().await;
    assert_eq!(refused_option(&error.unwrap_err()).0, "strategy");
    // Another layout, step or write concern alike.
    let error = test.sequence("decl_order").step(2).next().await;
    assert_eq!(refused_option(&error.unwrap_err()).0, "step");
    let error = test
        .sequence("decl_order")
        .counter_write_concern(seqid::layout::CounterWriteConcern::Database)
        .next()
        .await;
    assert_eq!(
        refused_option(&error.unwrap_err()).0,
        "counter_write_concern"
    );
    assert_eq!(
        counter_value(&test, "decl_order").await,
        Some(1001),
        "none taken"
    );

    // A misspelled name with the collection it means to number: the collection's `_id` is
    // another sequence's. Still refused once a counter of that name exists.
    let error = test
        .sequence("decl_order_no")
        .collection("decl_orders")
        .next()
        .await
        .unwrap_err();
    let (option, message) = refused_option(&error);
    assert_eq!(option, "collection");
    assert!(message.contains("`decl_order`"), "{message}");
    assert!(message.contains("declared::Order"), "{message}");
    assert_eq!(counter_value(&test, "decl_order_no").await, None);
    assert_eq!(test.sequence("decl_order_no").next().await.unwrap(), 1);
    let error = test
        .sequence("decl_order_no")
        .collection("decl_orders")
        .next()
        .await;
    assert_eq!(refused_option(&error.unwrap_err()).0, "collection");
    assert_eq!(counter_value(&test, "decl_order_no").await, Some(1));
    assert_eq!(counter_value(&test, "decl_order").await, Some(1001));
}

/// The counter `_id` of a scoped sequence in the tutorial's layout, as seqid keys it.
async fn scoped_counter(
    db: &mongodb::Database,
    counters: &str,
    prefix: &str,
) -> Vec<(String, i64)> {
    let coll = db.collection::<BsonDocument>(counters);
    let mut found = Vec::new();
    let mut cursor = coll.find(doc! {}).await.unwrap();
    while cursor.advance().await.unwrap() {
        let counter = cursor.deserialize_current().unwrap();
        let id = match counter.get("_id") {
            Some(Bson::String(id)) if id.starts_with(prefix) => id.clone(),
            _ => continue,
        };
        found.push((id, counter.get("seq").and_then(integer).unwrap()));
    }
    found.sort();
    found
}

#[tokio::test]
async fn a_declared_scope_is_required_and_its_values_typed() {
    let test = test_db("decl_scope").await;
    let client = test.client();
    // A string for the `i32` year would count in a counter of its own.
    let mut session = client.start_session().await.unwrap();
    let error = test
        .sequence("decl_invoice")
        .gapless()
        .scope("year", "2026")
        .session(&mut session)
        .next()
        .await
        .unwrap_err();
    match error.kind() {
        ErrorKind::InvalidScope { reason, .. } => {
            assert!(reason.contains("`year` is i32"), "{error}")
        }
        other => panic!("{other:?}"),
    }
    // No scope at all would use an unscoped counter: refused, naming the type.
    let error = test.sequence("decl_invoice").gapless().next().await;
    match error.unwrap_err().into_kind() {
        ErrorKind::InvalidScope { reason, .. } => {
            assert!(reason.contains("declared::Invoice"), "{reason}");
            assert!(reason.contains(".scope(\"year\", value)"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // Another scope field: refused.
    let error = test
        .sequence("decl_invoice")
        .scope("customer", 8)
        .next()
        .await;
    assert!(
        matches!(
            error.as_ref().map_err(Error::kind),
            Err(ErrorKind::InvalidScope { .. })
        ),
        "{error:?}"
    );
    // The strategy not given is the declaration's: gapless, so a transaction is needed.
    let error = test
        .sequence("decl_invoice")
        .scope("year", 2026)
        .next()
        .await;
    assert!(
        matches!(
            error.as_ref().map_err(Error::kind),
            Err(ErrorKind::TransactionRequired { .. })
        ),
        "{error:?}"
    );
    assert!(
        scoped_counter(&test, "counters", "[\"decl_invoice\"")
            .await
            .is_empty(),
        "no counter made"
    );
    if without_transactions(&test).await {
        return;
    }
    // In a transaction, by name and typed, the one counter the invoices of 2026 use.
    let mut invoice = Invoice {
        id: None,
        year: 2026,
        number: 0,
    };
    let mut session = client.start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    invoice.insert(&*test).session(&mut session).await.unwrap();
    let named = test
        .sequence("decl_invoice")
        .scope("year", 2026)
        .session(&mut session)
        .next()
        .await
        .unwrap();
    let typed = Invoice::sequence()
        .next(&*test)
        .scope(2026)
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
    assert_eq!((invoice.number, named, typed), (1, 2, 3));
    let counters = scoped_counter(&test, "counters", "[\"decl_invoice\"").await;
    assert_eq!(counters.len(), 1, "one counter for 2026: {counters:?}");
    assert_eq!(counters[0].1, 3);
}

#[tokio::test]
async fn a_type_s_numbers_share_its_counter_and_live_block() {
    let test = test_db("decl_block").await;
    let handle = shared(&test);
    let ticket = |project: &str| Ticket {
        id: None,
        project: project.into(),
        number: 0,
    };
    let mut first = ticket("apollo");
    first.insert(&handle).await.unwrap();
    assert_eq!(first.number, 1);
    // The typed call takes the type's block of 10, in its counters collection.
    let numbers = Ticket::sequence()
        .next_n(&handle, 3)
        .scope("apollo")
        .await
        .unwrap();
    assert_eq!(numbers, [2, 3, 4]);
    let named = handle
        .sequence("decl_ticket")
        .scope("project", "apollo")
        .next()
        .await
        .unwrap();
    assert_eq!(named, 5, "by name: the same counter, block and options");
    let mut second = ticket("apollo");
    second.insert(&handle).await.unwrap();
    assert_eq!(second.number, 6);
    let counters = scoped_counter(&test, "decl_sequences", "[\"decl_ticket\"").await;
    assert_eq!(counters.len(), 1, "{counters:?}");
    assert_eq!(counters[0].1, 10, "one block reserved");
    assert_eq!(
        counter_value(&test, "decl_ticket").await,
        None,
        "not in `counters`"
    );
    let stats = Ticket::sequence().stats(&handle);
    assert_eq!(stats.reservations, 1);
    // Through a bare database, the typed call reserves exactly its own.
    let bare = Ticket::sequence()
        .next(&*test)
        .scope("apollo")
        .await
        .unwrap();
    assert_eq!(bare, 11);
}

#[tokio::test]
async fn a_name_two_types_declare_differently_is_refused_unless_the_call_says_which() {
    let test = test_db("decl_twice").await;
    let error = test.sequence("decl_twice").next().await.unwrap_err();
    let (option, message) = refused_option(&error);
    assert_eq!(option, "start");
    assert!(message.contains("declared::TwiceA"), "{message}");
    assert!(message.contains("declared::TwiceB"), "{message}");
    // Given, the start still differs from one of them.
    let error = test.sequence("decl_twice").start(500).next().await;
    assert_eq!(refused_option(&error.unwrap_err()).0, "start");
    assert_eq!(counter_value(&test, "decl_twice").await, None);
    // Each type takes its own numbers as declared.
    assert_eq!(TwiceB::sequence().next(&*test).await.unwrap(), 500);
    assert_eq!(TwiceA::sequence().next(&*test).await.unwrap(), 501);
}

#[tokio::test]
async fn a_name_in_another_counters_collection_is_another_sequence() {
    let test = test_db("decl_elsewhere").await;
    // `decl_order` in another counters collection is not the type's counter: no check.
    let id = test
        .sequence("decl_order")
        .counters("elsewhere")
        .start(1)
        .next()
        .await
        .unwrap();
    assert_eq!(id, 1);
    // An undeclared name is the caller's to shape.
    let id = test
        .sequence("decl_undeclared")
        .start(7)
        .next()
        .await
        .unwrap();
    assert_eq!(id, 7);
}
