//! Find-or-insert by a natural key (issue 38): many callers racing over a few new keys
//! store one document per key and every caller holds it (its ids, its code), through a
//! handle and a bare database, with unique and with equal content, in tasks and in OS
//! processes; what a lost race costs per strategy; a found document never changes and
//! costs no id; what is refused before any id is taken; gapless in the caller's
//! transaction; cancelled calls settled by calling again. The fault suite's lost replies
//! and kills are `faults::natural`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use mongodb::IndexModel;
use mongodb::bson::doc;
use mongodb::options::IndexOptions;
use seqid::action::Transaction;
use seqid::error::ErrorKind;
use seqid::{Document, Entry, Error};
use seqid_harness::{TestDb, test_db};
use serde::{Deserialize, Serialize};

use crate::support::keyed::{
    Called, Keyed, KeyedBlock, KeyedCounters, KeyedGapless, KeyedIssue, KeyedMongoose,
    KeyedOptimistic, KeyedTicket, email_of, race, settled,
};
use crate::support::transactions::without_transactions;
use crate::support::writers::Via;
use crate::support::{Workers, counter_value, one_to, shared};

/// Callers per race, and keys raced for.
const TASKS: usize = 16;
const KEYS: u32 = 8;

/// The database of `test` through a handle or bare.
fn via(test: &TestDb, kind: &str) -> Via {
    match kind {
        "handle" => Via::Handle(shared(test)),
        _ => Via::Bare(test.db().clone()),
    }
}

/// Every document of `T`'s collection, by key.
async fn stored<T: Keyed>(db: &mongodb::Database) -> BTreeMap<String, T> {
    use futures_util::TryStreamExt;
    let docs: Vec<T> = T::collection(db)
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut by_key = BTreeMap::new();
    for doc in docs {
        if let Some(first) = by_key.insert(doc.email().to_owned(), doc.clone()) {
            panic!("two documents of one key: {first:?} and {doc:?}");
        }
    }
    by_key
}

/// What a race left, checked call by call: one document per key raced for, and every
/// caller holds it (ids, codes, every field). With unique content (asserted by the
/// callers) exactly one caller per key was told `Inserted`, the one whose name the
/// document holds. With equal content at most one was, and where none was, a caller whose
/// call was cut short (cancelled, or its answer lost) held the stored number then: that
/// call stored it, and equal content could not say so. Returns the stored documents.
pub(crate) async fn check_race<T: Keyed>(
    db: &mongodb::Database,
    calls: &[Called<T>],
    keys: u32,
    unique: bool,
    label: &str,
) -> BTreeMap<String, T> {
    let stored = stored::<T>(db).await;
    let raced: BTreeSet<String> = (0..keys).map(email_of).collect();
    assert_eq!(
        stored.keys().cloned().collect::<BTreeSet<_>>(),
        raced,
        "{label}: one document per key"
    );
    let mut inserted: BTreeMap<u32, Vec<&Called<T>>> = BTreeMap::new();
    for call in calls {
        let held = &stored[&email_of(call.key)];
        assert_eq!(
            &call.doc, held,
            "{label}: {} holds the stored document",
            call.caller
        );
        if call.entry == Entry::Inserted {
            inserted.entry(call.key).or_default().push(call);
        }
    }
    for key in 0..keys {
        let told = inserted.get(&key).map_or(0, Vec::len);
        let number = stored[&email_of(key)].number();
        let cut = calls
            .iter()
            .any(|c| c.key == key && c.cut.is_some() && c.cut == number);
        match (told, unique) {
            (1, _) => {}
            (0, false) => assert!(
                cut,
                "{label}: key {key} told no one Inserted, and no cut call held its number"
            ),
            _ => panic!("{label}: key {key} told Inserted to {told} callers"),
        }
        if unique {
            let call = inserted[&key][0];
            assert_eq!(
                stored[&email_of(key)].caller(),
                call.caller,
                "{label}: the caller told Inserted wrote the document"
            );
        }
    }
    stored
}

/// The numbers of the stored documents.
fn numbers<T: Keyed>(stored: &BTreeMap<String, T>) -> BTreeSet<i64> {
    stored.values().filter_map(Keyed::number).collect()
}

/// `TASKS` callers race over `KEYS` new keys of `T`, through a handle and bare, with
/// unique and equal content; each run is checked ([`check_race`]) and its ids held to the
/// strategy's promise by `promise(via, docs, counter, stats)`.
async fn races<T: Keyed>(
    label: &str,
    promise: impl Fn(&str, usize, &TestDb, &Via, &BTreeSet<i64>, Option<i64>),
) {
    for kind in ["handle", "bare"] {
        for unique in [true, false] {
            let run = format!("{label}_{kind}_{}", if unique { "unique" } else { "equal" });
            let test = test_db(&run).await;
            let via = via(&test, kind);
            T::create_indexes(via.db()).await.unwrap();
            let (calls, resumed) = race::<T>(&via, &run, TASKS, KEYS, unique).await;
            assert_eq!(resumed, 0, "{run}: no fault, nothing left unknown");
            assert_eq!(calls.len(), TASKS * KEYS as usize);
            let stored = check_race::<T>(test.db(), &calls, KEYS, unique, &run).await;
            let counter = counter_value(test.db(), T::SEQUENCE.name).await;
            promise(&run, stored.len(), &test, &via, &numbers(&stored), counter);
        }
    }
}

/// Counters: each lost race is a gap, and the handle counts it: the counter ends at the
/// documents plus the races lost (a bare database keeps no count: the counter ends at
/// least at the documents, at most one id per call).
#[tokio::test]
async fn a_race_over_new_keys_stores_one_document_per_key_counters() {
    races::<KeyedCounters>("key_race_counters", |run, docs, _, via, ids, counter| {
        let counter = counter.expect("the counter exists");
        assert_eq!(ids.len(), docs);
        assert!(
            ids.iter().all(|&id| id <= counter),
            "{run}: ids within the counter"
        );
        match via {
            Via::Handle(db) => {
                let lost = KeyedCounters::sequence().stats(db).races_lost;
                let retries = KeyedCounters::sequence().stats(db).retries;
                // SecantusDB's unanswered first-use upsert may cost an id (a retry).
                let gaps = counter as u64 - docs as u64;
                assert!(
                    gaps >= lost && gaps <= lost + retries,
                    "{run}: {gaps} gaps for {lost} races lost ({retries} retries)"
                );
            }
            // At most an id per call, and SecantusDB's unanswered first-use upserts
            // (which may cost an id each of the tasks meeting the first key, see
            // `support::assert_dense`).
            Via::Bare(_) => assert!(
                (docs as i64..=(TASKS as i64 * (KEYS as i64 + 1))).contains(&counter),
                "{run}: counter {counter}"
            ),
        }
    })
    .await;
}

/// Block: through a handle a lost race gives its id back to the live block, so the ids
/// handed out are exactly the documents stored; bare, no block outlives a call (a gap
/// per race lost, as counters).
#[tokio::test]
async fn a_race_over_new_keys_stores_one_document_per_key_block() {
    races::<KeyedBlock>("key_race_block", |run, docs, _, via, ids, counter| {
        let counter = counter.expect("the counter exists");
        assert_eq!(ids.len(), docs);
        assert!(
            ids.iter().all(|&id| id <= counter),
            "{run}: ids within the counter"
        );
        if let Via::Handle(db) = via {
            let stats = KeyedBlock::sequence().stats(db);
            assert_eq!(
                stats.ids, docs as u64,
                "{run}: one id handed out per document ({} races lost, given back)",
                stats.races_lost
            );
            // Every id taken and not stored is still in the block.
            assert_eq!(
                counter as u64,
                docs as u64 + stats.unused,
                "{run}: the counter holds the documents and the block's rest"
            );
        }
    })
    .await;
}

/// Optimistic: a lost race's candidate was never stored: the ids are 1..=n.
#[tokio::test]
async fn a_race_over_new_keys_stores_one_document_per_key_optimistic() {
    races::<KeyedOptimistic>("key_race_opt", |run, docs, _, _, ids, counter| {
        assert_eq!(*ids, one_to(docs), "{run}: no gap");
        assert_eq!(counter, None, "{run}: no counter");
    })
    .await;
}

/// Another tool's counter (mongoose-sequence's layout, start 10, step 5) advances once
/// per id taken: the documents' and the races lost.
#[tokio::test]
async fn a_race_over_new_keys_on_another_tools_counter() {
    races::<KeyedMongoose>("key_race_ms", |run, docs, test, via, ids, _| {
        let stepped: BTreeSet<i64> = ids.iter().map(|id| (id - 10) % 5).collect();
        assert_eq!(
            stepped,
            BTreeSet::from([0]),
            "{run}: ids on the step: {ids:?}"
        );
        if let Via::Handle(db) = via {
            let lost = KeyedMongoose::sequence().stats(db).races_lost;
            let top = ids.iter().max().copied().unwrap();
            assert!(
                top <= 10 + 5 * (docs as i64 + lost as i64 - 1),
                "{run}: {top}"
            );
        }
        let _ = test;
    })
    .await;
}

/// Several sequences, a scope and a display code: every caller holds the winner's
/// global id, its number in its repository and its code; numbers are unique per
/// repository and codes say them.
#[tokio::test]
async fn a_race_gives_every_caller_the_winners_ids_and_code() {
    races::<KeyedIssue>("key_race_issue", |run, docs, _, _, ids, _| {
        assert_eq!(ids.len(), docs, "{run}");
    })
    .await;
    races::<KeyedTicket>("key_race_ticket", |run, docs, _, _, _, _| {
        assert_eq!(docs, KEYS as usize, "{run}");
    })
    .await;
    // The numbers and codes of the last runs, read back: unique per scope, as coded.
    let test = test_db("key_race_issue_codes").await;
    let db = shared(&test);
    KeyedIssue::create_indexes(&db).await.unwrap();
    let via = Via::Handle(db);
    let (calls, _) = race::<KeyedIssue>(&via, "codes", 8, KEYS, true).await;
    let stored = check_race::<KeyedIssue>(test.db(), &calls, KEYS, true, "codes").await;
    let mut per_repo: BTreeMap<&str, BTreeSet<i64>> = BTreeMap::new();
    for issue in stored.values() {
        assert_eq!(issue.code, format!("{}#{}", issue.repo, issue.number));
        assert!(
            per_repo
                .entry(&issue.repo)
                .or_default()
                .insert(issue.number)
        );
    }
    let tickets = test_db("key_race_ticket_ids").await;
    let db = shared(&tickets);
    KeyedTicket::create_indexes(&db).await.unwrap();
    let via = Via::Handle(db);
    let (calls, _) = race::<KeyedTicket>(&via, "tickets", 8, KEYS, false).await;
    let stored = check_race::<KeyedTicket>(tickets.db(), &calls, KEYS, false, "tickets").await;
    for project in ["p0", "p1"] {
        let numbers: BTreeSet<i64> = stored
            .values()
            .filter(|t| t.project == project)
            .map(|t| t.number)
            .collect();
        let count = stored.values().filter(|t| t.project == project).count();
        // Optimistic per project: 1..=n in each, no gap.
        assert_eq!(numbers, one_to(count), "project {project}");
    }
    assert!(
        stored.values().all(|t| t.id.is_some()),
        "the winner's ObjectId held"
    );
}

/// Callers in three OS processes (two workers and this one), four tasks each, race over
/// the same new keys: one document per key, and every caller of every process holds it.
async fn processes_race<T: Keyed>(label: &str) -> (BTreeMap<String, T>, TestDb) {
    let test = test_db(label).await;
    T::create_indexes(test.db()).await.unwrap();
    let keys = 30;
    let modes = ["handle", "bare"].map(|via| format!("keyed/{}/{via}", T::NAME));
    let mut workers = Workers::spawn(test.db(), modes, 4, keys);
    let via = Via::Handle(shared(&test));
    workers.go();
    let (mut calls, _) = race::<T>(&via, "here", 4, keys, true).await;
    for line in workers.finish_raw().await {
        let call = crate::support::keyed::parse::<T>(&line)
            .unwrap_or_else(|| panic!("a worker printed {line:?}"));
        calls.push(call);
    }
    assert_eq!(calls.len(), 3 * 4 * keys as usize);
    let stored = check_race::<T>(test.db(), &calls, keys, true, label).await;
    (stored, test)
}

#[tokio::test]
#[ignore = "full suite"]
async fn a_race_across_processes_stores_one_document_per_key_counters() {
    let (stored, test) = processes_race::<KeyedCounters>("key_procs_counters").await;
    let counter = counter_value(test.db(), "keyed_counters").await.unwrap();
    assert!(counter >= stored.len() as i64);
}

#[tokio::test]
#[ignore = "full suite"]
async fn a_race_across_processes_stores_one_document_per_key_optimistic() {
    let (stored, _test) = processes_race::<KeyedOptimistic>("key_procs_opt").await;
    assert_eq!(numbers(&stored), one_to(stored.len()), "no gap");
}

#[tokio::test]
#[ignore = "full suite"]
async fn a_race_across_processes_stores_one_document_per_key_block() {
    let (stored, _test) = processes_race::<KeyedBlock>("key_procs_block").await;
    assert_eq!(numbers(&stored).len(), stored.len());
}

/// A key found takes no id and changes nothing: the caller's document becomes the stored
/// one, the counter stays, the stored document stays as it was (the caller's other
/// values are dropped, not merged). Also in a session, with no transaction.
async fn found_takes_nothing<T: Keyed>(label: &str) {
    let test = test_db(label).await;
    let db = shared(&test);
    T::create_indexes(&db).await.unwrap();
    let mut first = T::make(email_of(1), "first".into());
    assert_eq!(first.find_or_insert(&db).await.unwrap(), Entry::Inserted);
    let number = first.number().expect("numbered");
    let before = stored::<T>(test.db()).await;
    let counter = counter_value(test.db(), T::SEQUENCE.name).await;
    for caller in ["second", "third"] {
        let mut again = T::make(email_of(1), caller.into());
        assert_eq!(again.find_or_insert(&db).await.unwrap(), Entry::Found);
        assert_eq!(again, first, "{label}: the stored document, as it is");
    }
    let mut session = test.client().start_session().await.unwrap();
    let mut in_session = T::make(email_of(1), "session".into());
    let entry = in_session.find_or_insert(&db).session(&mut session).await;
    assert_eq!(entry.unwrap(), Entry::Found);
    assert_eq!(in_session.number(), Some(number));
    let mut other = T::make(email_of(2), "other".into());
    let entry = other.find_or_insert(&db).session(&mut session).await;
    assert_eq!(
        entry.unwrap(),
        Entry::Inserted,
        "{label}: inserted in a session"
    );
    let after = stored::<T>(test.db()).await;
    assert_eq!(
        after[&email_of(1)],
        before[&email_of(1)],
        "{label}: never changed"
    );
    assert_eq!(after.len(), 2);
    if let Some(counter) = counter {
        let now = counter_value(test.db(), T::SEQUENCE.name).await.unwrap();
        let step = T::SEQUENCE.layout.step;
        let block = match T::SEQUENCE.strategy {
            seqid::Strategy::Block { .. } => counter, // the first block covers the second
            _ => counter + step,
        };
        assert_eq!(now, block, "{label}: only the second key took an id");
    }
    assert_eq!(T::sequence().stats(&db).races_lost, 0);
}

#[tokio::test]
async fn a_found_key_takes_no_id_and_the_stored_document_never_changes() {
    found_takes_nothing::<KeyedCounters>("key_found_counters").await;
    found_takes_nothing::<KeyedBlock>("key_found_block").await;
    found_takes_nothing::<KeyedOptimistic>("key_found_opt").await;
    found_takes_nothing::<KeyedMongoose>("key_found_ms").await;
    found_takes_nothing::<KeyedIssue>("key_found_issue").await;
    found_takes_nothing::<KeyedTicket>("key_found_ticket").await;
}

/// Without a unique index on the key, the call is refused before any id is taken (and
/// before the key is looked up): no counter, no document. A partial unique index does not
/// count; one unique on some of the key's fields does.
#[tokio::test]
async fn a_missing_unique_index_is_refused_before_any_id_is_taken() {
    let test = test_db("key_no_index").await;
    let db = shared(&test);
    let mut customer = KeyedCounters::make(email_of(1), "c".into());
    let error = customer.find_or_insert(&db).await.unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error.kind(), ErrorKind::MissingIndex { keys, .. } if &**keys == "{ \"email\": 1 }")
            && message.contains("find_or_insert relies on"),
        "{message}"
    );
    assert_eq!(counter_value(test.db(), "keyed_counters").await, None);
    assert_eq!(customer.id, 0, "no id taken");
    // A partial unique index leaves documents outside it: refused too.
    let partial = IndexModel::builder()
        .keys(doc! { "email": 1 })
        .options(
            IndexOptions::builder()
                .unique(true)
                .partial_filter_expression(doc! { "caller": { "$type": "string" } })
                .build(),
        )
        .build();
    let collection = KeyedCounters::collection(test.db());
    collection.create_index(partial).await.unwrap();
    if partial_indexes_listed(&collection).await {
        let error = customer.find_or_insert(test.db()).await.unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::MissingIndex { .. }),
            "{error}"
        );
        assert_eq!(counter_value(test.db(), "keyed_counters").await, None);
        let count = collection.count_documents(doc! {}).await.unwrap();
        assert_eq!(count, 0);
    }

    // A key of two fields, with an index unique on one of them: it keeps both unique.
    let tickets = test_db("key_subset_index").await;
    let unique_email = IndexModel::builder()
        .keys(doc! { "email": -1 })
        .options(IndexOptions::builder().unique(true).build())
        .build();
    KeyedTicket::collection(tickets.db())
        .create_index(unique_email)
        .await
        .unwrap();
    KeyedTicket::collection(tickets.db())
        .create_index(
            IndexModel::builder()
                .keys(doc! { "project": 1, "number": 1 })
                .options(IndexOptions::builder().unique(true).build())
                .build(),
        )
        .await
        .unwrap();
    let mut ticket = KeyedTicket::make(email_of(3), "t".into());
    assert_eq!(
        ticket.find_or_insert(tickets.db()).await.unwrap(),
        Entry::Inserted
    );
}

/// Whether the server lists a partial index's filter. nx-27017 0.8.1 does not (it lists
/// the index as a plain unique one): there, the partial case is not checked, and this says
/// so; MongoDB and SecantusDB list it.
async fn partial_indexes_listed(collection: &mongodb::Collection<KeyedCounters>) -> bool {
    use futures_util::TryStreamExt;
    let indexes: Vec<IndexModel> = collection
        .list_indexes()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let listed = indexes.iter().any(|index| {
        index
            .options
            .as_ref()
            .is_some_and(|o| o.partial_filter_expression.is_some())
    });
    if !listed {
        let flavor = seqid_harness::server_flavor().unwrap();
        assert_eq!(
            flavor,
            seqid_harness::ServerFlavor::Nx,
            "only nx-27017 is known to list a partial index without its filter"
        );
        eprintln!("nx-27017 lists the partial index without its filter: partial case not checked");
    }
    listed
}

/// A customer whose key may be left out, and no declared key: keys named per call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
#[seq_id("loose", collection = "loose")]
struct Loose {
    #[serde(rename = "_id")]
    id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    login: Option<String>,
    tags: Vec<String>,
    #[seq_display("L-{id}")]
    code: String,
}

/// What names no one document is refused before any id is taken, with the sequence,
/// the key and the value in the message: a key field missing, null or an array; a key
/// named per call that is empty, repeated, dotted, or holds what the insert fills; a
/// gapless type without a running transaction (refused before the lookup, so that found
/// and not found answer alike).
#[tokio::test]
async fn keys_that_name_no_one_document_are_refused_before_any_id_is_taken() {
    let test = test_db("key_invalid").await;
    let db = shared(&test);
    let unique = IndexOptions::builder().unique(true).build();
    for keys in [doc! { "login": 1 }, doc! { "tags": 1 }] {
        let index = IndexModel::builder()
            .keys(keys)
            .options(unique.clone())
            .build();
        Loose::collection(&db).create_index(index).await.unwrap();
    }
    let loose = |login: Option<&str>| Loose {
        id: 0,
        login: login.map(str::to_owned),
        tags: vec!["a".into()],
        code: String::new(),
    };
    let cases: [(Loose, &'static [&'static str], &str); 8] = [
        (
            loose(None),
            &["login"],
            "natural key (login) (login = missing): the document does not hold the field",
        ),
        (
            loose(Some("ada")),
            &["tags"],
            "(tags) (tags = an array): a unique index holds each element",
        ),
        (loose(Some("ada")), &[], "natural key (): it names no field"),
        (
            loose(Some("ada")),
            &["_id"],
            "`_id` holds a number the insert takes",
        ),
        (
            loose(Some("ada")),
            &["code"],
            "`code` holds a code the insert writes",
        ),
        (
            loose(Some("ada")),
            &["login", "login"],
            "`login` is named twice",
        ),
        (
            loose(Some("ada")),
            &["login.first"],
            "`login.first` is not a top-level field name",
        ),
        (
            loose(Some("ada")),
            &["nickname"],
            "(nickname) (nickname = missing)",
        ),
    ];
    for (mut doc, key, says) in cases {
        let error = doc.find_or_insert(&db).by(key).await.unwrap_err();
        let message = error.to_string();
        assert!(
            matches!(error.kind(), ErrorKind::InvalidNaturalKey { .. })
                && message.starts_with("sequence `loose`: cannot find or insert in `loose`")
                && message.contains(says)
                && message.ends_with("nothing was written"),
            "{key:?}: {message}"
        );
        assert_eq!(doc.id, 0);
    }
    assert_eq!(counter_value(test.db(), "loose").await, None, "no id taken");
    // A null key: serialized, and refused.
    #[derive(Serialize, Deserialize, seqid::Document)]
    #[seq_id("nullable", collection = "nullable")]
    struct Nullable {
        #[serde(rename = "_id")]
        id: i64,
        #[seq_key]
        login: Option<String>,
    }
    Nullable::create_indexes(&db).await.unwrap();
    let error = Nullable { id: 0, login: None }
        .find_or_insert(&db)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("(login) (login = null)"),
        "{error}"
    );
    // The key named per call works as the declared one.
    let mut ada = loose(Some("ada"));
    assert_eq!(
        ada.find_or_insert(&db).by(&["login"]).await.unwrap(),
        Entry::Inserted
    );
    let mut again = loose(Some("ada"));
    assert_eq!(
        again.find_or_insert(&db).by(&["login"]).await.unwrap(),
        Entry::Found
    );
    assert_eq!((again.id, again.code.as_str()), (1, "L-1"));
    assert_eq!(counter_value(test.db(), "loose").await, Some(1));
    // Gapless without a transaction: refused before the key is looked up.
    KeyedGapless::create_indexes(&db).await.unwrap();
    let mut invoice = KeyedGapless::make(email_of(1), "i".into());
    let error = invoice.find_or_insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::TransactionRequired { .. }),
        "{error}"
    );
    assert_eq!(counter_value(test.db(), "keyed_gapless").await, None);
}

/// Gapless in the callers' transactions: tasks race over new keys, each call in a
/// transaction of its own (`Transaction`), run again on a transient error (the race lost
/// surfaces as a write conflict, which aborts the transaction and its id with it). One document per
/// key, every caller holds it, and the ids are 1..=n with the counter at n: no race cost
/// an id.
#[tokio::test]
async fn gapless_races_in_transactions_leave_no_gap() {
    let test = test_db("key_gapless").await;
    if without_transactions(&test).await {
        return;
    }
    let db = shared(&test);
    KeyedGapless::create_indexes(&db).await.unwrap();
    let handles: Vec<_> = (0..8)
        .map(|task| {
            let (db, client) = (db.clone(), test.client().clone());
            tokio::spawn(async move {
                let mut session = client.start_session().await.unwrap();
                let mut calls = Vec::new();
                for key in 0..KEYS {
                    let caller = format!("g-{task}-{key}");
                    let (entry, doc) = loop {
                        let called = Transaction::new(&mut session)
                            .run((&db, &caller), |session, (db, caller)| {
                                Box::pin(async move {
                                    let mut doc =
                                        KeyedGapless::make(email_of(key), caller.to_string());
                                    let entry = doc.find_or_insert(*db).session(session).await?;
                                    Ok::<_, Error>((entry, doc))
                                })
                            })
                            .await;
                        match called {
                            Ok(called) => break called,
                            // A key committed after the transaction's snapshot: MongoDB
                            // answers WriteConflict, labelled transient, which the helper
                            // runs again; SecantusDB may answer DuplicateKey, unlabelled
                            // (not seen in 13 runs here, kept so that a server difference
                            // is not a red run). Called again, as the label would.
                            Err(e) if matches!(e.kind(), ErrorKind::DuplicateKey { .. }) => {}
                            Err(e) => panic!("{caller}: {e}"),
                        }
                    };
                    calls.push(Called {
                        key,
                        caller,
                        entry,
                        doc,
                        cut: None,
                    });
                }
                calls
            })
        })
        .collect();
    let mut calls = Vec::new();
    for handle in handles {
        calls.extend(handle.await.unwrap());
    }
    let stored = check_race::<KeyedGapless>(test.db(), &calls, KEYS, true, "gapless").await;
    assert_eq!(numbers(&stored), one_to(KEYS as usize), "no gap");
    assert_eq!(
        counter_value(test.db(), "keyed_gapless").await,
        Some(KEYS as i64),
        "every id taken by an aborted transaction went back"
    );
}

/// Calls cancelled at random points (a timeout of 0 to 15 ms) are settled by calling
/// `find_or_insert` again with the same document, which keeps whatever ids it holds: one
/// document per key, every caller holds it; with unique content (asserted) exactly one
/// caller per key told `Inserted`, with equal content at most one (or a cut call held the
/// number).
#[tokio::test]
async fn cancelled_calls_settled_by_calling_again_store_one_document_per_key() {
    for kind in ["handle", "bare"] {
        for unique in [true, false] {
            let label = format!("key_cancel_{kind}_{unique}");
            let test = test_db(&label).await;
            let via = via(&test, kind);
            KeyedCounters::create_indexes(via.db()).await.unwrap();
            let handles: Vec<_> = (0..TASKS)
                .map(|task| {
                    let via = via.clone();
                    tokio::spawn(async move {
                        let mut calls = Vec::new();
                        for key in 0..KEYS {
                            let caller = format!("c-{task}-{key}");
                            let content = if unique {
                                caller.clone()
                            } else {
                                String::new()
                            };
                            let mut doc = KeyedCounters::make(email_of(key), content);
                            let cut =
                                Duration::from_millis((task as u64 * 7 + key as u64 * 3) % 16);
                            let call =
                                crate::support::keyed::find_or_insert(&via, &mut doc, unique);
                            let (entry, cut) = match tokio::time::timeout(cut, call).await {
                                Ok(Ok(entry)) => (entry, None),
                                Ok(Err(e))
                                    if !matches!(e.kind(), ErrorKind::OutcomeUnknown { .. }) =>
                                {
                                    panic!("{caller}: {e}")
                                }
                                Ok(Err(_)) | Err(_) => {
                                    let held = doc.number();
                                    let (entry, _, cut) =
                                        settled(&via, &mut doc, unique, held).await.unwrap();
                                    (entry, cut)
                                }
                            };
                            calls.push(Called {
                                key,
                                caller,
                                entry,
                                doc,
                                cut,
                            });
                        }
                        calls
                    })
                })
                .collect();
            let mut calls = Vec::new();
            for handle in handles {
                calls.extend(handle.await.unwrap());
            }
            check_race::<KeyedCounters>(test.db(), &calls, KEYS, unique, &label).await;
        }
    }
}

/// Another writer that stores a document of the same key, under an id of its own, just
/// before seqid's insert of it: from the driver's command monitoring it sees the `insert`
/// of a document with `email` about to be sent and inserts `{ _id: -1, email, caller:
/// "rival" }` first, through its own client, once. This makes "another process stored
/// the key between the lookup and the insert" deterministic.
struct Rival {
    email: String,
    armed: std::sync::atomic::AtomicBool,
}

impl Rival {
    fn watching(email: String) -> std::sync::Arc<Self> {
        std::sync::Arc::new(Rival {
            email,
            armed: true.into(),
        })
    }

    fn handler(
        self: &std::sync::Arc<Self>,
    ) -> mongodb::event::EventHandler<mongodb::event::command::CommandEvent> {
        use mongodb::event::command::CommandEvent;
        let rival = self.clone();
        mongodb::event::EventHandler::callback(move |event| {
            let CommandEvent::Started(started) = event else {
                return;
            };
            let Ok(documents) = started.command.get_array("documents") else {
                return;
            };
            let Some(collection) = started.command.get_str("insert").ok() else {
                return;
            };
            let ours = documents.iter().any(|d| {
                d.as_document()
                    .and_then(|d| d.get_str("email").ok())
                    .is_some_and(|email| email == rival.email)
            });
            if !ours || !rival.armed.swap(false, std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            let (collection, email) = (collection.to_owned(), rival.email.clone());
            crate::support::write_meanwhile(&started.db, move |db| async move {
                let rival = doc! { "_id": -1_i64, "email": email, "caller": "rival" };
                db.collection::<mongodb::bson::Document>(&collection)
                    .insert_one(rival)
                    .await
                    .unwrap();
            });
        })
    }
}

/// A race lost to another writer, made certain ([`Rival`]): the caller gets the rival's
/// document, `Found`, and the race is counted; the id it took costs what the strategy
/// promises, seen in the id the next new key gets: counters a gap (3 after 1), block
/// through a handle nothing (2: the id went back to the live block), block bare a gap (no
/// block outlives the call), optimistic nothing (2: through a handle the candidate goes
/// back to the frontier; bare, the next maximum hands it out again).
async fn a_lost_race<T: Keyed>(kind: &str, next: i64) {
    let label = format!("key_rival_{}_{kind}", T::SEQUENCE.strategy_name());
    let rival = Rival::watching(email_of(2));
    let handler = rival.handler();
    let test = seqid_harness::test_db_with(&label, move |o| {
        o.command_event_handler = Some(handler);
    })
    .await;
    let via = via(&test, kind);
    T::create_indexes(via.db()).await.unwrap();
    let mut first = T::make(email_of(1), "first".into());
    assert_eq!(
        crate::support::keyed::find_or_insert(&via, &mut first, true)
            .await
            .unwrap(),
        Entry::Inserted
    );
    assert_eq!(first.number(), Some(1));
    let mut second = T::make(email_of(2), "second".into());
    let entry = crate::support::keyed::find_or_insert(&via, &mut second, true).await;
    assert_eq!(entry.unwrap(), Entry::Found, "{label}");
    assert_eq!(
        (second.number(), second.caller()),
        (Some(-1), "rival"),
        "{label}"
    );
    assert!(
        !rival.armed.load(std::sync::atomic::Ordering::SeqCst),
        "{label}: the rival wrote"
    );
    if let Via::Handle(db) = &via {
        assert_eq!(T::sequence().stats(db).races_lost, 1, "{label}");
    }
    let mut third = T::make(email_of(3), "third".into());
    assert_eq!(
        crate::support::keyed::find_or_insert(&via, &mut third, true)
            .await
            .unwrap(),
        Entry::Inserted
    );
    assert_eq!(
        third.number(),
        Some(next),
        "{label}: what the lost race cost"
    );
    let stored = stored::<T>(test.db()).await;
    assert_eq!(stored.len(), 3);
    assert_eq!(
        stored[&email_of(2)],
        second,
        "{label}: the rival's, unchanged"
    );
}

#[tokio::test]
async fn a_race_lost_to_another_writer_costs_what_the_strategy_promises() {
    a_lost_race::<KeyedCounters>("handle", 3).await;
    a_lost_race::<KeyedCounters>("bare", 3).await;
    a_lost_race::<KeyedBlock>("handle", 2).await;
    a_lost_race::<KeyedBlock>("bare", 3).await;
    a_lost_race::<KeyedOptimistic>("handle", 2).await;
    a_lost_race::<KeyedOptimistic>("bare", 2).await;
}

/// `find_or_insert_many`: the keys found in one lookup and the rest inserted in one
/// `insert_many` after one reservation; a key twice in the slice inserted once (the later
/// one `Found`); every document holds its stored one; nothing found is changed.
#[tokio::test]
async fn many_documents_are_looked_up_once_and_the_new_ones_inserted_once() {
    let (test, commands) = crate::support::counted_db("key_many").await;
    let db = shared(&test);
    KeyedCounters::create_indexes(&db).await.unwrap();
    let mut before = Vec::new();
    for key in [1, 3, 5] {
        let mut doc = KeyedCounters::make(email_of(key), format!("before-{key}"));
        doc.find_or_insert(&db).await.unwrap();
        before.push(doc);
    }
    commands.reset();
    let keys = [0, 1, 2, 3, 4, 5, 6, 7, 8, 2];
    let mut docs: Vec<KeyedCounters> = keys
        .iter()
        .enumerate()
        .map(|(at, &key)| KeyedCounters::make(email_of(key), format!("many-{at}")))
        .collect();
    let entries = KeyedCounters::find_or_insert_many(&mut docs, &db)
        .await
        .unwrap();
    let expected: Vec<Entry> = keys
        .iter()
        .enumerate()
        .map(|(at, key)| match (key, at) {
            (1 | 3 | 5, _) | (2, 9) => Entry::Found,
            _ => Entry::Inserted,
        })
        .collect();
    assert_eq!(entries, expected);
    assert_eq!(
        (
            commands.count("find"),
            commands.count("insert"),
            commands.count("findAndModify")
        ),
        (1, 1, 1),
        "one lookup, one insert_many, one reservation: {:?}",
        commands.snapshot()
    );
    let stored = stored::<KeyedCounters>(test.db()).await;
    assert_eq!(stored.len(), 9);
    for (doc, key) in docs.iter().zip(keys) {
        assert_eq!(doc, &stored[&email_of(key)], "key {key}");
    }
    for doc in &before {
        assert_eq!(&stored[&doc.email], doc, "a found document never changes");
    }
    // Ids 4..=9 for the six new keys, in the slice's order.
    let new: Vec<i64> = [0, 2, 4, 6, 7, 8]
        .iter()
        .map(|&k| stored[&email_of(k)].id)
        .collect();
    assert_eq!(new, [4, 5, 6, 7, 8, 9]);
    // Again: every key found, no insert, no reservation.
    commands.reset();
    let entries = KeyedCounters::find_or_insert_many(&mut docs, &db)
        .await
        .unwrap();
    assert!(entries.iter().all(|e| e.is_found()));
    assert_eq!(
        commands.count("insert") + commands.count("findAndModify"),
        0
    );
}

/// Many callers of `find_or_insert_many` racing over the same new keys, each in an order
/// of its own: one document per key, every caller holds it, as for one document.
async fn races_many<T: Keyed>(label: &str) {
    for kind in ["handle", "bare"] {
        for unique in [true, false] {
            let run = format!("{label}_{kind}_{unique}");
            let test = test_db(&run).await;
            let via = via(&test, kind);
            T::create_indexes(via.db()).await.unwrap();
            let (calls, again) =
                crate::support::keyed::race_many::<T>(&via, &run, 8, KEYS * 2, 4, unique).await;
            assert_eq!(again, 0, "{run}: no fault, nothing left unknown");
            check_race::<T>(test.db(), &calls, KEYS * 2, unique, &run).await;
        }
    }
}

#[tokio::test]
async fn a_race_of_many_documents_stores_one_document_per_key() {
    races_many::<KeyedCounters>("key_many_counters").await;
    races_many::<KeyedBlock>("key_many_block").await;
    races_many::<KeyedOptimistic>("key_many_opt").await;
    races_many::<KeyedIssue>("key_many_issue").await;
}
