//! A model's next id before its document (issue 49): `T::reserve_ids(&db, n)` and
//! `reserve_id`, and `insert(..).reserved(token)`, for the counters, block and gapless
//! strategies: beside inserts of the same sequence from many tasks; ids and display codes
//! stored; ids typed by the user refused, tokens of another scope or transaction, or of
//! another database or handle, refused before anything is written; a token's document's
//! items numbered as any insert's; the handle's live block shared, cancelled callers; a
//! token's insert settled by `resume_insert`; reserved ids beside inserts in three worker
//! processes and here, for every strategy that keeps a counter, with documents equal but
//! for the id. Every id is checked.

use std::collections::BTreeSet;
use std::future::IntoFuture;
use std::time::Duration;

use mongodb::bson::{Document as BsonDocument, doc};
use seqid::error::ErrorKind;
use seqid::{Document, Error};
use seqid_harness::test_db;
use serde::Serialize;

use crate::support::ledger::{Told, assert_strategy, check};
use crate::support::models::{
    CountedDoc, EqualBlock, EqualCounted, EqualGapless, Event, Model, User,
};
use crate::support::transactions::without_transactions;
use crate::support::writers::{Op, Via, write, write_reserved};
use crate::support::{
    Workers, all_documents, assert_dense, assert_transaction_required, counter_value, integer,
    shared,
};

#[derive(Debug, Serialize, Document)]
#[seq_id("reserve_ledger", collection = "reserve_ledger", strategy = "gapless")]
struct Entry {
    #[serde(rename = "_id")]
    id: i64,
    by: String,
}

/// A scoped sequence on a field, with a display code showing its number and scope.
#[derive(Debug, Serialize, Document)]
#[seq_id(collection = "reserve_tickets")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<mongodb::bson::oid::ObjectId>,
    project: String,
    #[seq_id("reserve_ticket", scope = "project")]
    number: i64,
    #[seq_display("T-{project}-{number:04}")]
    code: String,
}

/// Two sequences: the primary's id reserved, the other's taken by the insert.
#[derive(Debug, Serialize, Document)]
#[seq_id("reserve_orders", collection = "reserve_orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_id("reserve_order_refs")]
    reference: i64,
}

fn ticket(project: &str) -> Ticket {
    Ticket {
        id: None,
        project: project.into(),
        number: 0,
        code: String::new(),
    }
}

/// `_id -> by` of every stored document of `collection`.
async fn stored_by(db: &mongodb::Database, collection: &str) -> Vec<(i64, String)> {
    let mut all: Vec<(i64, String)> = all_documents(db, collection)
        .await
        .iter()
        .map(|d| {
            let id = d.get("_id").and_then(integer).expect("an integer _id");
            (id, d.get_str("by").unwrap_or_default().to_owned())
        })
        .collect();
    all.sort();
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reserved_ids_beside_inserts_from_many_tasks_are_exactly_one_to_n() {
    let test = test_db("reserve_tasks").await;
    let handle = shared(&test);
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let (handle, bare) = (handle.clone(), (*test).clone());
            tokio::spawn(async move {
                let mut given = Vec::new();
                for k in 0..12 {
                    let by = format!("{task}-{k}");
                    let mut user = User {
                        id: 0,
                        by: by.clone(),
                    };
                    // Through the handle and a bare database; one token, two, or none.
                    let id = match k % 4 {
                        0 => user.insert(&handle).await.unwrap(),
                        1 => {
                            let token = User::reserve_id(&bare).await.unwrap();
                            let id = token.id();
                            assert_eq!(user.insert(&bare).reserved(token).await.unwrap(), id);
                            id
                        }
                        2 => {
                            let tokens = User::reserve_ids(&handle, 2).await.unwrap();
                            assert_eq!(tokens[1].id(), tokens[0].id() + 1, "one reservation");
                            let mut ids = Vec::new();
                            for (i, token) in tokens.into_iter().enumerate() {
                                let by = format!("{by}-{i}");
                                let mut user = User {
                                    id: 0,
                                    by: by.clone(),
                                };
                                ids.push(user.insert(&handle).reserved(token).await.unwrap());
                                assert_eq!(user.id, *ids.last().unwrap());
                                given.push((user.id, by));
                            }
                            continue;
                        }
                        _ => user.insert(&bare).await.unwrap(),
                    };
                    assert_eq!(user.id, id);
                    given.push((id, by));
                }
                given
            })
        })
        .collect();
    let mut given = Vec::new();
    for task in tasks {
        given.extend(task.await.unwrap());
    }
    let ids: BTreeSet<i64> = given.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), given.len(), "every id distinct");
    let n = given.len();
    assert_eq!(n, 16 * 15);
    assert_dense(&ids, n, User::sequence().stats(&handle).retries);
    given.sort();
    assert_eq!(
        stored_by(&test, "users").await,
        given,
        "the ids stored are exactly those given, each with its document"
    );
    assert_eq!(counter_value(&test, "users").await, ids.last().copied());
}

#[tokio::test]
async fn a_token_inserted_stores_its_id_and_display_code() {
    let test = test_db("reserve_codes").await;
    Ticket::create_indexes(&*test).await.unwrap();
    let tokens = Ticket::reserve_ids(&*test, 3)
        .scope("apollo")
        .await
        .unwrap();
    let ids: Vec<i64> = tokens.iter().map(|t| t.id()).collect();
    assert_eq!(ids, [1, 2, 3]);
    let mut tokens = tokens.into_iter();
    let (first, second) = (tokens.next().unwrap(), tokens.next().unwrap());
    // The code shown before the document is stored: the one stored.
    let mut shown = ticket("apollo");
    first.fill(&mut shown).unwrap();
    assert_eq!((shown.number, shown.code.as_str()), (1, "T-apollo-0001"));
    assert_eq!(shown.insert(&*test).reserved(first).await.unwrap(), 1);
    // A document left unset gets the id and the code from the insert.
    let mut plain = ticket("apollo");
    assert_eq!(plain.insert(&*test).reserved(second).await.unwrap(), 2);
    assert_eq!(plain.code, "T-apollo-0002");
    // The third token is never used: a gap, and the next insert goes past it.
    let mut next = ticket("apollo");
    assert_eq!(next.insert(&*test).await.unwrap(), 4);
    // Another scope's counter is its own.
    let gemini = Ticket::reserve_id(&*test).scope("gemini").await.unwrap();
    assert_eq!(gemini.id(), 1);
    let mut other = ticket("gemini");
    other.insert(&*test).reserved(gemini).await.unwrap();
    let mut stored: Vec<(String, i64, String)> = all_documents(&test, "reserve_tickets")
        .await
        .iter()
        .map(|d| {
            (
                d.get_str("project").unwrap().to_owned(),
                d.get("number").and_then(integer).unwrap(),
                d.get_str("code").unwrap().to_owned(),
            )
        })
        .collect();
    stored.sort();
    let expected = [
        ("apollo", 1, "T-apollo-0001"),
        ("apollo", 2, "T-apollo-0002"),
        ("apollo", 4, "T-apollo-0004"),
        ("gemini", 1, "T-gemini-0001"),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(p, n, c)| (p.to_string(), *n, c.to_string()))
        .collect();
    assert_eq!(stored, expected);
}

#[tokio::test]
async fn an_id_typed_by_the_user_is_still_refused_with_or_without_a_token() {
    let test = test_db("reserve_typed").await;
    let handle = shared(&test);
    let mut typed = User {
        id: 7,
        by: "typed".into(),
    };
    let error = typed.insert(&handle).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::IdAlreadySet { value: 7, .. }),
        "{error:?}"
    );
    let token = User::reserve_id(&handle).await.unwrap();
    assert_eq!(token.id(), 1);
    let error = typed.insert(&handle).reserved(token).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::IdAlreadySet { value: 7, .. }),
        "{error:?}"
    );
    assert_eq!(typed.id, 7, "the caller's id left alone");
    // A code typed by hand is refused too, and one equal to the token's is taken.
    Ticket::create_indexes(&*test).await.unwrap();
    let token = Ticket::reserve_id(&*test).scope("apollo").await.unwrap();
    let mut coded = ticket("apollo");
    coded.code = "T-apollo-0099".into();
    assert!(matches!(
        token.fill(&mut coded).map_err(Error::into_kind),
        Err(ErrorKind::InvalidCode { .. })
    ));
    let error = coded.insert(&*test).reserved(token).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidCode { .. }),
        "{error:?}"
    );
    // A token can only be made by seqid and inserts once: moved into the insert. What is
    // left: nothing written.
    assert!(all_documents(&test, "users").await.is_empty());
    assert!(all_documents(&test, "reserve_tickets").await.is_empty());
    // resume_insert takes no token: a compile error (seqid-derive's
    // tests/ui/fail/resume_insert_takes_no_token.rs).
}

#[tokio::test]
async fn a_token_of_another_scope_is_refused_before_anything_is_written() {
    let test = test_db("reserve_scope").await;
    Ticket::create_indexes(&*test).await.unwrap();
    let token = Ticket::reserve_id(&*test).scope("apollo").await.unwrap();
    let mut gemini = ticket("gemini");
    let error = token.fill(&mut gemini).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::ReservedScope { id: 1, .. }),
        "{error:?}"
    );
    assert_eq!(
        (gemini.number, gemini.code.as_str()),
        (0, ""),
        "left as it was"
    );
    let error = gemini.insert(&*test).reserved(token).await.unwrap_err();
    match error.kind() {
        ErrorKind::ReservedScope {
            id: 1,
            reserved,
            document,
            ..
        } => {
            assert!(reserved.contains("apollo"), "{error}");
            assert!(document.contains("gemini"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        error
            .to_string()
            .starts_with("sequence `reserve_ticket`: id 1"),
        "{error}"
    );
    assert_eq!((gemini.number, gemini.code.as_str()), (0, ""), "left unset");
    assert!(gemini.id.is_none(), "no ObjectId filled either");
    assert!(all_documents(&test, "reserve_tickets").await.is_empty());
    // No scope named for a scoped sequence: refused, nothing taken.
    let error = Ticket::reserve_ids(&*test, 2).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidScope { .. }),
        "{error:?}"
    );
    let error = Ticket::reserve_ids(&*test, 2)
        .scope_unchecked(1.5)
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidScope { .. }),
        "{error:?}"
    );
    assert!(
        Ticket::reserve_ids(&*test, 0)
            .scope("apollo")
            .await
            .unwrap()
            .is_empty()
    );
    let last = Ticket::sequence()
        .last_reserved(&*test)
        .scope("apollo")
        .await
        .unwrap();
    assert_eq!(last, Some(1), "only the one token's id taken");
}

#[tokio::test]
async fn a_document_s_other_sequences_take_their_ids_as_usual() {
    let test = test_db("reserve_several").await;
    let handle = shared(&test);
    let tokens = Order::reserve_ids(&handle, 2).await.unwrap();
    let mut first = Order {
        id: 0,
        reference: 0,
    };
    first.insert(&handle).await.unwrap();
    assert_eq!((first.id, first.reference), (3, 1));
    let mut stored = vec![(3, 1)];
    for (k, token) in tokens.into_iter().enumerate() {
        let mut order = Order {
            id: 0,
            reference: 0,
        };
        order.insert(&handle).reserved(token).await.unwrap();
        assert_eq!((order.id, order.reference), (k as i64 + 1, k as i64 + 2));
        stored.push((order.id, order.reference));
    }
    let mut found: Vec<(i64, i64)> = all_documents(&test, "reserve_orders")
        .await
        .iter()
        .map(|d| {
            let id = d.get("_id").and_then(integer).unwrap();
            (id, d.get("reference").and_then(integer).unwrap())
        })
        .collect();
    found.sort();
    stored.sort();
    assert_eq!(found, stored);
}

#[tokio::test]
async fn a_reservation_through_a_handle_shares_the_live_block() {
    let test = test_db("reserve_block").await;
    let handle = shared(&test);
    let mut first = Event { id: 0 };
    assert_eq!(first.insert(&handle).await.unwrap(), 1);
    assert_eq!(counter_value(&test, "events").await, Some(10));
    let tokens = Event::reserve_ids(&handle, 3).await.unwrap();
    let ids: Vec<i64> = tokens.iter().map(|t| t.id()).collect();
    assert_eq!(ids, [2, 3, 4], "from the live block");
    assert_eq!(
        counter_value(&test, "events").await,
        Some(10),
        "no round trip"
    );
    assert_eq!(Event { id: 0 }.insert(&handle).await.unwrap(), 5);
    for (token, id) in tokens.into_iter().zip(ids) {
        assert_eq!(
            Event { id: 0 }
                .insert(&handle)
                .reserved(token)
                .await
                .unwrap(),
            id
        );
    }
    // Seven more: the block's last five, and one whole block for the rest.
    let more = Event::reserve_ids(&handle, 7).await.unwrap();
    let more: Vec<i64> = more.iter().map(|t| t.id()).collect();
    assert_eq!(more, (6..=12).collect::<Vec<_>>());
    assert_eq!(counter_value(&test, "events").await, Some(20));
    // Through a bare database, exactly its own ids.
    let bare = Event::reserve_ids(&*test, 2).await.unwrap();
    assert_eq!(bare.iter().map(|t| t.id()).collect::<Vec<_>>(), [21, 22]);
    assert_eq!(counter_value(&test, "events").await, Some(22));
    let stored: BTreeSet<i64> = all_documents(&test, "events")
        .await
        .iter()
        .map(|d| d.get("_id").and_then(integer).unwrap())
        .collect();
    assert_eq!(stored, (1..=5).collect());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_reservations_through_a_handle_lose_no_id() {
    let test = test_db("reserve_cancelled").await;
    let handle = shared(&test);
    let reserve = || Event::reserve_ids(&handle, 2);
    let mut received = BTreeSet::new();
    let mut cancelled = 0;
    for k in 0..60 {
        // Every other caller goes away after its first poll: while it waits for a
        // block (reserved all the same, in a task of its own), or with its ids.
        let result = match k % 2 {
            0 => tokio::time::timeout(Duration::ZERO, reserve().into_future()).await,
            _ => Ok(reserve().await),
        };
        match result {
            Ok(tokens) => {
                for token in tokens.unwrap() {
                    assert!(received.insert(token.id()), "twice");
                }
            }
            Err(_) => cancelled += 1,
        }
    }
    assert!(cancelled > 0, "no caller was cancelled while it waited");
    for token in Event::reserve_ids(&handle, 1).await.unwrap() {
        assert!(received.insert(token.id()));
    }
    let reserved = counter_value(&test, "events").await.unwrap();
    // What the cancelled callers never received is in the live block: the next callers
    // take exactly the ids not handed out yet, and no new block is reserved.
    let missing: BTreeSet<i64> = (1..=reserved).filter(|id| !received.contains(id)).collect();
    let mut drained = BTreeSet::new();
    for _ in 0..missing.len() {
        let token = Event::reserve_id(&handle).await.unwrap();
        drained.insert(token.id());
    }
    assert_eq!(
        drained, missing,
        "the ids the cancelled callers never received"
    );
    assert_eq!(
        counter_value(&test, "events").await,
        Some(reserved),
        "no block more"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_s_insert_whose_outcome_is_unknown_is_settled_by_resume_insert() {
    let test = test_db("reserve_resume").await;
    let handle = shared(&test);
    // An insert that never arrived: the document keeps the token's id, as after a lost
    // answer, and resume_insert stores it under that id.
    let token = User::reserve_id(&handle).await.unwrap();
    let mut lost = User {
        id: 0,
        by: "lost".into(),
    };
    lost.insert(&handle).reserved(token).await.unwrap();
    let users = test.collection::<BsonDocument>("users");
    users.delete_one(doc! { "_id": 1 }).await.unwrap();
    assert_eq!(lost.id, 1);
    assert_eq!(lost.resume_insert(&handle).await.unwrap(), 1);
    // Cancelled after its first poll: the write runs to its end, and resume_insert learns
    // what became of it.
    let (mut settled, mut cancelled) = (Vec::new(), 0);
    for k in 0..20 {
        let token = User::reserve_id(&handle).await.unwrap();
        let id = token.id();
        let mut user = User {
            id: 0,
            by: format!("cancelled-{k}"),
        };
        let insert = user.insert(&handle).reserved(token).into_future();
        match tokio::time::timeout(Duration::ZERO, insert).await {
            Ok(done) => assert_eq!(done.unwrap(), id),
            Err(_) => {
                cancelled += 1;
                assert_eq!(user.id, id, "the id filled before the first await");
                assert_eq!(user.resume_insert(&handle).await.unwrap(), id);
            }
        }
        settled.push((id, format!("cancelled-{k}")));
    }
    assert!(cancelled > 0, "no insert was cancelled while it wrote");
    settled.push((1, "lost".into()));
    settled.sort();
    assert_eq!(stored_by(&test, "users").await, settled, "each stored once");
}

#[tokio::test]
async fn gapless_tokens_live_and_die_with_the_transaction() {
    let test = test_db("reserve_gapless").await;
    let handle = shared(&test);
    let error = Entry::reserve_id(&handle).await.unwrap_err();
    assert_transaction_required(&error, false);
    let mut session = test.client().start_session().await.unwrap();
    let error = Entry::reserve_ids(&handle, 2)
        .session(&mut session)
        .await
        .unwrap_err();
    assert_transaction_required(&error, true);
    assert_eq!(
        counter_value(&test, "reserve_ledger").await,
        None,
        "nothing taken"
    );
    if without_transactions(&test).await {
        return;
    }
    // Reserved and inserted in one transaction: committed, dense.
    session.start_transaction().await.unwrap();
    let tokens = Entry::reserve_ids(&handle, 2)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(tokens.iter().map(|t| t.id()).collect::<Vec<_>>(), [1, 2]);
    for token in tokens {
        let mut entry = Entry {
            id: 0,
            by: "first".into(),
        };
        entry
            .insert(&handle)
            .reserved(token)
            .session(&mut session)
            .await
            .unwrap();
    }
    session.commit_transaction().await.unwrap();
    // An aborted transaction takes its ids back: the next one takes them again, and the
    // aborted one's tokens are void in the next transaction, refused before anything is
    // written: 3, which a later reservation of this process took again, by its ticket; 4,
    // which nothing took again, by the counter read in the transaction (it shows 3).
    session.start_transaction().await.unwrap();
    let void = Entry::reserve_ids(&*test, 2)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(void.iter().map(|t| t.id()).collect::<Vec<_>>(), [3, 4]);
    session.abort_transaction().await.unwrap();
    let mut void = void.into_iter();
    session.start_transaction().await.unwrap();
    let again = Entry::reserve_id(&handle)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(again.id(), 3, "the aborted transaction's id, taken again");
    let mut stale = Entry {
        id: 0,
        by: "void".into(),
    };
    for (id, says) in [
        (3, "a later reservation in this process took 3 again"),
        (4, "shows 3 as the last id handed out"),
    ] {
        let error = (stale.insert(&handle).reserved(void.next().unwrap()))
            .session(&mut session)
            .await
            .unwrap_err();
        let message = error.to_string();
        assert!(
            matches!(error.kind(), ErrorKind::ReservedTransaction { id: got, .. } if *got == id),
            "{error:?}"
        );
        assert!(message.contains(says), "{message}");
        assert!(message.contains("Nothing was written"), "{message}");
        assert_eq!(stale.id, 0);
    }
    let mut entry = Entry {
        id: 0,
        by: "second".into(),
    };
    entry
        .insert(&handle)
        .reserved(again)
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
    // Tokens of a transaction that committed without them: refused outside a transaction
    // and in another session's; in a later transaction of their own session, a token
    // fills the hole its transaction left (its id was handed out once, committed).
    session.start_transaction().await.unwrap();
    let late = Entry::reserve_ids(&handle, 3)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(late.iter().map(|t| t.id()).collect::<Vec<_>>(), [4, 5, 6]);
    session.commit_transaction().await.unwrap();
    let mut late = late.into_iter();
    let error = (stale.insert(&handle).reserved(late.next().unwrap()))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("this insert runs in no transaction"),
        "{error}"
    );
    let mut other = test.client().start_session().await.unwrap();
    other.start_transaction().await.unwrap();
    let error = (stale.insert(&handle).reserved(late.next().unwrap()))
        .session(&mut other)
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("a transaction of another session"),
        "{error}"
    );
    other.abort_transaction().await.unwrap();
    session.start_transaction().await.unwrap();
    let mut filler = Entry {
        id: 0,
        by: "late".into(),
    };
    (filler.insert(&handle).reserved(late.next().unwrap()))
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
    assert_eq!(filler.id, 6);
    assert_eq!(
        stale.id, 0,
        "every refused insert left the document as it was"
    );
    assert_eq!(
        stored_by(&test, "reserve_ledger").await,
        [
            (1, "first".into()),
            (2, "first".into()),
            (3, "second".into()),
            (6, "late".into())
        ]
    );
    assert_eq!(counter_value(&test, "reserve_ledger").await, Some(6));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gapless_tokens_and_inserts_from_many_transactions_commit_dense() {
    let test = test_db("reserve_gapless_tasks").await;
    if without_transactions(&test).await {
        return;
    }
    let handle = shared(&test);
    // The counter first, so that no two transactions race to make it.
    let mut session = test.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let first = Entry::reserve_id(&handle)
        .session(&mut session)
        .await
        .unwrap();
    let mut entry = Entry {
        id: 0,
        by: "first".into(),
    };
    entry
        .insert(&handle)
        .reserved(first)
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let (db, client) = (handle.clone(), test.client().clone());
            tokio::spawn(async move {
                let mut committed = Vec::new();
                let mut session = client.start_session().await.unwrap();
                for k in 0..4 {
                    session.start_transaction().await.unwrap();
                    let by = format!("{task}-{k}");
                    // A token and an insert in one transaction.
                    let attempt = async {
                        let token = Entry::reserve_id(&db).session(&mut session).await?;
                        let mut reserved = Entry {
                            id: 0,
                            by: format!("{by}-r"),
                        };
                        reserved
                            .insert(&db)
                            .reserved(token)
                            .session(&mut session)
                            .await?;
                        let mut plain = Entry {
                            id: 0,
                            by: format!("{by}-p"),
                        };
                        plain.insert(&db).session(&mut session).await?;
                        Ok::<_, Error>([(reserved.id, reserved.by), (plain.id, plain.by)])
                    };
                    let written = match attempt.await {
                        Ok(written) => written,
                        // A write conflict: the transaction goes, with its ids.
                        Err(_) => {
                            let _ = session.abort_transaction().await;
                            continue;
                        }
                    };
                    if (task + k) % 3 == 0 {
                        session.abort_transaction().await.unwrap();
                    } else if session.commit_transaction().await.is_ok() {
                        committed.extend(written);
                    }
                }
                committed
            })
        })
        .collect();
    let mut committed = vec![(1, "first".to_owned())];
    for task in tasks {
        committed.extend(task.await.unwrap());
    }
    committed.sort();
    let ids: Vec<i64> = committed.iter().map(|(id, _)| *id).collect();
    assert!(committed.len() > 1);
    assert_eq!(
        ids,
        (1..=committed.len() as i64).collect::<Vec<_>>(),
        "dense, none twice"
    );
    assert_eq!(stored_by(&test, "reserve_ledger").await, committed);
    assert_eq!(
        counter_value(&test, "reserve_ledger").await,
        Some(committed.len() as i64)
    );
}

/// Tokens and inserts of `T` (documents equal but for the id) from 4 tasks here and 4 in
/// each of three worker processes, every other document under a reserved id: every
/// document stored once, under an id its call was told, and the ids as the strategy
/// promises (`ledger::check`, `assert_strategy`). Through handles and bare databases,
/// but for block, whose bare calls would each leave a block part used.
async fn reserved_beside_inserts_across_processes<T: Model<Kind: seqid::kind::WithCounter>>(
    label: &str,
) {
    let test = test_db(label).await;
    let gapless = T::SEQUENCE.strategy == seqid::Strategy::Gapless;
    if gapless && without_transactions(&test).await {
        return;
    }
    // Made first: concurrent transactions that would create them conflict, and a counter
    // made in a race may cost SecantusDB a retry (see `assert_dense`).
    for collection in [T::SEQUENCE.collection, T::SEQUENCE.counters] {
        test.create_collection(collection).await.unwrap();
    }
    T::create_indexes(&*test).await.unwrap();
    let via = Via::on("handle", test.client(), test.name()).unwrap();
    let mut told = Told::default();
    told.add::<T>(write::<T>(&via, "seqid", 1, 1, Op::One).await.unwrap());
    let vias = match T::SEQUENCE.strategy {
        seqid::Strategy::Block { .. } => ["handle", "handle", "handle"],
        _ => ["handle", "bare", "handle"],
    };
    let modes = vias.map(|via| format!("reserve/{}/{via}", T::NAME));
    let mut workers = Workers::spawn(&test, modes, 4, 6);
    workers.go();
    let ours = write_reserved::<T>(&via, "seqid", 4, 6).await.unwrap();
    told.add::<T>(ours);
    told.retries += via.retries::<T>();
    let (theirs, retries) = workers.finish_lines().await;
    told.add::<T>(theirs);
    told.retries += retries;
    let n = 1 + 4 * 6 * 4;
    let ids = check::<T>(&test, &told, &[("seqid", n)]).await;
    // Holders of a block part used: this process's handle and each worker's.
    assert_strategy::<T>(&ids, &told, 1 + 3);
    if gapless {
        assert_eq!(counter_value(&test, T::SEQUENCE.name).await, Some(n as i64));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn counters_tokens_beside_inserts_across_processes() {
    reserved_beside_inserts_across_processes::<EqualCounted>("reserve_processes_counters").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn block_tokens_beside_inserts_across_processes() {
    reserved_beside_inserts_across_processes::<EqualBlock>("reserve_processes_block").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gapless_tokens_beside_inserts_across_processes() {
    reserved_beside_inserts_across_processes::<EqualGapless>("reserve_processes_gapless").await;
}

/// Inserts under reserved ids whose replies the fault proxy loses, each document unique
/// (its place in the run), so that a resume may settle by content. A reply lost once is absorbed by the driver's retry (same transaction
/// number, answered from the server's record of the first attempt): no error, nothing
/// twice. Both replies lost (the first attempt's and its retry's): the outcome is
/// unknown, the document keeps its token's id, and `resume_insert` settles it. After
/// both phases, every document stored once, under exactly the ids reserved, 1..=40, and
/// the counter at 40: no id lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_replies_to_a_token_s_insert_store_it_once() {
    use crate::support::faults::{Rig, lose_one_reply_at_a_time};
    let rig = Rig::start(true).await;
    let proxy = rig.proxy();
    let db = rig.app.database("reserve_lost");
    let store = |n: u32| {
        let db = db.clone();
        async move {
            let token = CountedDoc::reserve_id(&db).await?;
            let id = token.id();
            let mut doc = CountedDoc::make("seqid", n);
            match doc.insert(&db).reserved(token).await {
                Ok(_) => Ok::<_, Error>((id, false)),
                Err(error) if matches!(error.kind(), ErrorKind::OutcomeUnknown { .. }) => {
                    assert_eq!(crate::support::writers::number_of(&doc), id, "kept");
                    doc.resume_insert(&db).content_is_unique().await?;
                    Ok((id, true))
                }
                Err(error) => Err(error),
            }
        }
    };
    let mut ids = Vec::new();
    let before = proxy.fired();
    let work = async {
        let mut ids = Vec::new();
        for n in 0..30 {
            ids.push(store(n).await.unwrap());
        }
        ids
    };
    let (absorbed, ()) = tokio::join!(work, lose_one_reply_at_a_time(proxy, "insert"));
    assert!(proxy.fired() > before, "no reply was lost");
    assert!(
        absorbed.iter().all(|&(_, resumed)| !resumed),
        "the driver's retry absorbs a reply lost once"
    );
    ids.extend(absorbed.into_iter().map(|(id, _)| id));
    let mut resumed = 0;
    for n in 30..40 {
        if n % 2 == 0 {
            proxy.lose_reply("insert", None, 2);
        }
        let (id, unknown) = store(n).await.unwrap();
        proxy.disarm_all();
        resumed += usize::from(unknown);
        ids.push(id);
    }
    assert!(resumed >= 1, "no outcome was left unknown");
    let expected: Vec<i64> = (1..=40).collect();
    assert_eq!(ids, expected, "the ids reserved, in order");
    let checked = rig.checker.database("reserve_lost");
    let seq = &<CountedDoc as seqid::Model>::SEQUENCE;
    let mut stored: Vec<i64> = all_documents(&checked, seq.collection)
        .await
        .iter()
        .map(|doc| integer(doc.get("_id").unwrap()).unwrap())
        .collect();
    stored.sort();
    assert_eq!(stored, expected, "every document stored once, under its id");
    assert_eq!(counter_value(&checked, seq.name).await, Some(40));
}

/// Two fresh databases on one server: a handle on one client reaches both. (The harness
/// moves to a fresh server after some databases; a pair split by the move is made again.)
async fn two_databases(label: &str) -> (seqid_harness::TestDb, seqid_harness::TestDb) {
    loop {
        let a = test_db(&format!("{label}_a")).await;
        let b = test_db(&format!("{label}_b")).await;
        if a.uri() == b.uri() {
            return (a, b);
        }
    }
}

/// A token of database a given to an insert into database b (issue 55, item 4), bare and
/// through one handle: refused before anything is written, naming both databases; b's
/// own reservations and inserts then begin at 1, and a's go on where they were.
#[tokio::test]
async fn a_token_is_refused_by_another_database_with_nothing_written() {
    for via in ["bare", "handle"] {
        let (a, b) = two_databases(&format!("reserve_elsewhere_{via}")).await;
        let handle = seqid::Sequences::new(a.client());
        let (db_a, db_b) = match via {
            "bare" => (Via::Bare(a.db().clone()), Via::Bare(b.db().clone())),
            _ => (
                Via::Handle(handle.database(a.name())),
                Via::Handle(handle.database(b.name())),
            ),
        };
        let mut tokens = match &db_a {
            Via::Bare(db) => User::reserve_ids(db, 2).await,
            Via::Handle(db) => User::reserve_ids(db, 2).await,
        }
        .unwrap();
        let kept = tokens.pop().unwrap();
        let token = tokens.pop().unwrap();
        assert_eq!((token.id(), kept.id()), (1, 2), "{via}");
        let mut user = User {
            id: 0,
            by: "b".into(),
        };
        let error = match &db_b {
            Via::Bare(db) => user.insert(db).reserved(token).await,
            Via::Handle(db) => user.insert(db).reserved(token).await,
        }
        .unwrap_err();
        let ErrorKind::ReservedElsewhere {
            id,
            reserved,
            insert,
            ..
        } = error.kind()
        else {
            panic!("{via}: {error:?}");
        };
        assert_eq!(*id, 1, "{via}");
        assert_eq!(&**reserved, format!("database `{}`", a.name()), "{via}");
        assert_eq!(&**insert, format!("database `{}`", b.name()), "{via}");
        let text = error.to_string();
        assert!(
            text.starts_with("sequence `users`: id 1 was reserved in database")
                && text.contains("Nothing was written")
                && text.contains(&format!("1 is a gap in database `{}`", a.name())),
            "{via}: {text}"
        );
        assert_eq!(user.id, 0, "{via}: no id written into the document");
        assert_eq!(stored_by(&b, "users").await, [], "{via}");
        assert_eq!(counter_value(&b, "users").await, None, "{via}");

        // b's own sequence is untouched: its first reservation is 1, and inserts.
        let own = match &db_b {
            Via::Bare(db) => User::reserve_id(db).await,
            Via::Handle(db) => User::reserve_id(db).await,
        }
        .unwrap();
        assert_eq!(own.id(), 1, "{via}");
        let stored = match &db_b {
            Via::Bare(db) => user.insert(db).reserved(own).await,
            Via::Handle(db) => user.insert(db).reserved(own).await,
        };
        assert_eq!(stored.unwrap(), 1, "{via}");
        assert_eq!(stored_by(&b, "users").await, [(1, "b".into())]);

        // a's other token goes in where it was reserved; 1 is a gap there.
        let mut there = User {
            id: 0,
            by: "a".into(),
        };
        let stored = match &db_a {
            Via::Bare(db) => there.insert(db).reserved(kept).await,
            Via::Handle(db) => there.insert(db).reserved(kept).await,
        };
        assert_eq!(stored.unwrap(), 2, "{via}");
        assert_eq!(stored_by(&a, "users").await, [(2, "a".into())]);
        assert_eq!(counter_value(&a, "users").await, Some(2), "{via}");
    }
}

/// Two handles on one client, with one database name: two deployments to seqid (a handle
/// is one), so a token of one is refused through the other, nothing written. A clone of
/// the handle is the same handle, and a bare database can be told by its name only: both
/// insert the token.
#[tokio::test]
async fn a_token_is_refused_through_another_handle_and_taken_through_a_clone() {
    let test = test_db("reserve_other_handle").await;
    let first = seqid::Sequences::new(test.client());
    let other = seqid::Sequences::new(test.client()).database(test.name());
    let db = first.database(test.name());
    let token = User::reserve_id(&db).await.unwrap();
    let mut user = User {
        id: 0,
        by: "other".into(),
    };
    let error = user.insert(&other).reserved(token).await.unwrap_err();
    let ErrorKind::ReservedElsewhere {
        id: 1,
        reserved,
        insert,
        ..
    } = error.kind()
    else {
        panic!("{error:?}");
    };
    assert_eq!(&**reserved, format!("database `{}`", test.name()));
    assert_eq!(
        &**insert,
        format!(
            "database `{}` through another Sequences handle",
            test.name()
        )
    );
    assert!(error.to_string().contains("Nothing was written"), "{error}");
    assert_eq!((user.id, stored_by(&test, "users").await), (0, vec![]));

    let clone = first.clone().database(test.name());
    let token = User::reserve_id(&db).await.unwrap();
    assert_eq!(user.insert(&clone).reserved(token).await.unwrap(), 2);
    let mut bare = User {
        id: 0,
        by: "bare".into(),
    };
    let token = User::reserve_id(&db).await.unwrap();
    assert_eq!(bare.insert(&*test).reserved(token).await.unwrap(), 3);
    assert_eq!(
        stored_by(&test, "users").await,
        [(2, "other".into()), (3, "bare".into())]
    );
}

/// A document with items inserted through a token (issue 55): its items are numbered as
/// for any insert, in memory and as stored, with the mark; an append goes on after them.
#[tokio::test]
async fn a_token_s_insert_numbers_the_items_as_any_insert() {
    use crate::support::items::{Order as Lined, line, order};
    let test = test_db("reserve_items").await;
    let db = shared(&test);
    let token = Lined::reserve_id(&db).await.unwrap();
    let mut lined = order(3);
    let id = lined.insert(&db).reserved(token).await.unwrap();
    assert_eq!(id, 1);
    let numbers: Vec<i64> = lined.lines.iter().map(|line| line.no).collect();
    assert_eq!((numbers, lined.lines_last), (vec![1, 2, 3], 3));
    let stored = test
        .collection::<BsonDocument>("orders")
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .expect("stored");
    let stored_numbers: Vec<i64> = stored
        .get_array("lines")
        .unwrap()
        .iter()
        .map(|line| integer(line.as_document().unwrap().get("no").unwrap()).unwrap())
        .collect();
    assert_eq!(stored_numbers, [1, 2, 3]);
    assert_eq!(stored.get("lines_last").and_then(integer), Some(3));
    let mut more = vec![line("next")];
    let appended = Lined::append_lines(&db, doc! { "_id": id }, &mut more)
        .await
        .unwrap();
    assert_eq!(appended, [4]);
    // The mark, a plain field (nx-27017 stores a pushed element as a JSON string, see
    // `tests/it/items.rs`, but not the mark).
    let stored = test
        .collection::<BsonDocument>("orders")
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get("lines_last").and_then(integer), Some(4));
    assert_eq!(stored.get_array("lines").unwrap().len(), 4);
}
