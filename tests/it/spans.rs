//! What a service's log shows of seqid: each insert is a `seqid.insert` span that records
//! what it did (reservation round trips, outcome), and the warnings that every call would
//! repeat are logged once per process and sequence. Read from the formatted log of a
//! `tracing-subscriber`, as a service writes it.

use seqid::{Document, Sequences};
use seqid_harness::test_db;
use serde::Serialize;

use crate::support::log::Log;

// Its spans show which inserts waited for a reservation: each block reserved when the
// last is spent, not early in a task of its own (whose timing no span can pin down).
#[derive(Debug, Serialize, Document)]
#[seq_id(
    "span_block",
    collection = "span_block",
    strategy = "block",
    block_size = 2,
    prefetch = false
)]
struct Ticket {
    _id: i64,
    n: u32,
}

#[derive(Debug, Serialize, Document)]
#[seq_id("span_bare_block", collection = "span_bare_block", strategy = "block")]
struct BareTicket {
    _id: i64,
    n: u32,
}

#[derive(Debug, Serialize, Document)]
#[seq_id(
    "span_bare_optimistic",
    collection = "span_bare_optimistic",
    strategy = "optimistic"
)]
struct BareNote {
    _id: i64,
    n: u32,
}

#[derive(Debug, Serialize, Document)]
#[seq_id("span_bare_counters", collection = "span_bare_counters")]
struct BareCounted {
    _id: i64,
    n: u32,
}

/// Two sequences in one document: the span lists both.
#[derive(Debug, Serialize, Document)]
#[seq_id("span_issue", collection = "span_issues")]
struct Issue {
    _id: i64,
    repo: String,
    #[seq_id(
        "span_issue_number",
        scope = "repo",
        strategy = "block",
        block_size = 2
    )]
    number: i64,
}

/// An invoice with a display code (issue 27): the span shows the code it wrote.
#[derive(Debug, Serialize, Document)]
#[seq_id("span_invoice", collection = "span_invoices")]
struct Invoice {
    _id: i64,
    #[seq_display("INV-{_id:04}")]
    code: String,
}

/// The closed spans named `name` (`seqid.insert`, `seqid.numbers`, `seqid.append`) of the
/// log, in order.
fn closed<'a>(log: &'a str, name: &str) -> Vec<&'a str> {
    let opened = format!("{name}{{");
    log.lines()
        .filter(|line| line.contains(&opened) && line.contains(" close "))
        .collect()
}

/// Three inserts with a block of two, then one refused: the first and the third wait for
/// a reservation, the second takes its id from the live block, and the refused one says
/// why. (A current-thread runtime: the subscriber is this thread's.)
#[tokio::test]
async fn each_insert_is_a_span_that_records_what_it_did() {
    let test = test_db("spans").await;
    let db = Sequences::new(test.client()).database(test.name());
    let log = Log::default();
    let guard = log.install();
    for n in 0..3 {
        Ticket { _id: 0, n }.insert(&db).await.unwrap();
    }
    let error = Ticket { _id: 7, n: 3 }.insert(&db).await.unwrap_err();
    let mut many = vec![Ticket { _id: 0, n: 4 }, Ticket { _id: 0, n: 5 }];
    Ticket::insert_many(&mut many, &db).await.unwrap();
    drop(guard);

    let log = log.text();
    let spans = closed(&log, "seqid.insert");
    assert_eq!(spans.len(), 5, "one span per insert:\n{log}");
    for span in &spans {
        assert!(
            span.contains(r#"sequence="span_block""#) && span.contains(r#"strategy="block""#),
            "{span}"
        );
    }
    let reservations: Vec<bool> = spans[..3]
        .iter()
        .map(|span| span.contains("reservations=1"))
        .collect();
    assert_eq!(reservations, [true, false, true], "{log}");
    for span in &spans[..3] {
        assert!(span.contains(r#"outcome="stored""#), "{span}");
        assert!(span.contains(r#"operation="insert""#) && span.contains("documents=1"));
    }
    assert!(spans[3].contains("reservations=0"), "{}", spans[3]);
    assert!(
        spans[3].contains(&format!("outcome={error}")),
        "the refused insert's span names its error ({error}):\n{}",
        spans[3]
    );
    assert!(
        spans[4].contains(r#"operation="insert_many""#)
            && spans[4].contains("documents=2")
            && spans[4].contains(r#"outcome="stored""#),
        "{}",
        spans[4]
    );
}

/// A `block` or `optimistic` insert through a bare `mongodb::Database` warns once per
/// process and sequence, naming the handle; `counters` does not warn (through a bare
/// database it still does what the tutorial does).
#[tokio::test]
async fn a_bare_database_is_warned_of_once_per_sequence() {
    let test = test_db("spans_bare").await;
    BareNote::create_indexes(test.db()).await.unwrap();
    let log = Log::default();
    let guard = log.install();
    for n in 0..3 {
        BareTicket { _id: 0, n }.insert(test.db()).await.unwrap();
        BareNote { _id: 0, n }.insert(test.db()).await.unwrap();
        BareCounted { _id: 0, n }.insert(test.db()).await.unwrap();
    }
    drop(guard);

    let log = log.text();
    let warnings: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("WARN") && line.contains("bare mongodb::Database"))
        .collect();
    assert_eq!(warnings.len(), 2, "one warning per sequence:\n{log}");
    for (warning, sequence) in warnings
        .iter()
        .zip(["span_bare_block", "span_bare_optimistic"])
    {
        assert!(warning.contains(sequence), "{warning}");
        assert!(
            warning.contains("seqid::Sequences"),
            "names the handle: {warning}"
        );
    }
}

/// An insert of a document with several sequences lists them all in its span, the primary
/// first; its reservations count every sequence's round trips (two here, out together).
#[tokio::test]
async fn the_span_of_a_document_with_several_sequences_lists_them() {
    let test = test_db("spans_several").await;
    let db = Sequences::new(test.client()).database(test.name());
    let log = Log::default();
    let guard = log.install();
    let mut issue = Issue {
        _id: 0,
        repo: "seqid".into(),
        number: 0,
    };
    issue.insert(&db).await.unwrap();
    drop(guard);
    let log = log.text();
    let spans = closed(&log, "seqid.insert");
    assert_eq!(spans.len(), 1, "{log}");
    assert!(
        spans[0].contains(r#"sequences="span_issue, span_issue_number""#),
        "{}",
        spans[0]
    );
    assert!(spans[0].contains("reservations=2"), "{}", spans[0]);
    assert_eq!((issue._id, issue.number), (1, 1));
}

/// The span of an insert shows the code it wrote; of many, the first and the last.
#[tokio::test]
async fn the_span_of_an_insert_shows_the_code_it_wrote() {
    let test = test_db("spans_codes").await;
    let db = Sequences::new(test.client()).database(test.name());
    let log = Log::default();
    let guard = log.install();
    let invoice = || Invoice {
        _id: 0,
        code: String::new(),
    };
    invoice().insert(&db).await.unwrap();
    Invoice::insert_many(&mut [invoice(), invoice(), invoice()], &db)
        .await
        .unwrap();
    drop(guard);
    let log = log.text();
    let spans = closed(&log, "seqid.insert");
    assert_eq!(spans.len(), 2, "{log}");
    assert!(spans[0].contains(r#"code="INV-0001""#), "{}", spans[0]);
    assert!(
        spans[1].contains(r#"code="INV-0002 .. INV-0004""#),
        "{}",
        spans[1]
    );
}

/// Numbers taken with no document are spans too (`seqid.numbers`): a named sequence's
/// `next` with a block of two (the first and the third wait for a reservation), its
/// `next_n`, a type's `reserve_ids`, and a call refused, each with what it did.
#[tokio::test]
async fn numbers_with_no_document_are_spans_that_record_what_they_did() {
    use seqid::AsDatabase;
    let test = test_db("spans_numbers").await;
    let db = Sequences::new(test.client()).database(test.name());
    let log = Log::default();
    let guard = log.install();
    // As the type's above: each block when the last is spent.
    let numbers = || db.sequence("span_numbers").block(2).prefetch(false);
    for _ in 0..3 {
        numbers().next().await.unwrap();
    }
    let ids = numbers().next_n(3).await.unwrap();
    assert_eq!(ids, [4, 5, 6]);
    let tokens = Ticket::reserve_ids(&db, 2).await.unwrap();
    assert_eq!(tokens.len(), 2);
    let refused = db
        .sequence("span_numbers_scoped")
        .scope("project", "apollo")
        .layout(seqid::layout::Layout::GO)
        .next()
        .await;
    assert!(refused.is_err());
    let error = Ticket::reserve_ids(&db, u64::MAX).await.unwrap_err();
    drop(guard);

    let log = log.text();
    let spans = closed(&log, "seqid.numbers");
    assert_eq!(
        spans.len(),
        6,
        "one span per call but the named one refused:\n{log}"
    );
    for span in &spans[..4] {
        assert!(
            span.contains(r#"strategy="block""#) && span.contains(r#"counters="counters""#),
            "{span}"
        );
    }
    for span in &spans[..3] {
        assert!(
            span.contains(r#"sequence="span_numbers""#)
                && span.contains(r#"operation="next""#)
                && span.contains("numbers=1")
                && span.contains(r#"outcome="handed out""#),
            "{span}"
        );
    }
    let reservations: Vec<bool> = spans[..3]
        .iter()
        .map(|span| span.contains("reservations=1"))
        .collect();
    assert_eq!(reservations, [true, false, true], "{log}");
    assert!(
        spans[3].contains(r#"operation="next_n""#) && spans[3].contains("numbers=3"),
        "{}",
        spans[3]
    );
    assert!(
        spans[4].contains(r#"sequence="span_block""#)
            && spans[4].contains(r#"operation="reserve_ids""#)
            && spans[4].contains(r#"outcome="reserved""#),
        "{}",
        spans[4]
    );
    // A sequence named with options that make none opens no span (there is no sequence
    // to name); a type's call refused has its span, naming why.
    assert!(
        !log.contains("span_numbers_scoped"),
        "no span for options refused:\n{log}"
    );
    assert!(
        spans[5].contains(r#"operation="reserve_ids""#)
            && spans[5].contains("reservations=0")
            && spans[5].contains(&format!("outcome={error}")),
        "{}",
        spans[5]
    );
}

/// A line of an order, numbered in its array.
#[derive(Debug, Serialize, seqid::Item)]
struct Line {
    #[seq_no]
    no: i64,
    sku: String,
}

/// An order whose lines are numbered in their array (issue 57: appends run in the call's
/// context, as every action does, with a span of their own).
#[derive(Debug, Serialize, Document)]
#[seq_id("span_order", collection = "span_orders")]
struct Order {
    _id: i64,
    #[seq_items(last = "lines_last")]
    lines: Vec<Line>,
    lines_last: i64,
}

/// Each append is a `seqid.append` span: the array, how many items, and the outcome
/// (`appended`, or the error of one that finds no document).
#[tokio::test]
async fn each_append_is_a_span_that_records_its_outcome() {
    use mongodb::bson::doc;
    let test = test_db("spans_appends").await;
    let db = Sequences::new(test.client()).database(test.name());
    let mut order = Order {
        _id: 0,
        lines: Vec::new(),
        lines_last: 0,
    };
    let id = order.insert(&db).await.unwrap();
    let log = Log::default();
    let guard = log.install();
    let mut lines = vec![
        Line {
            no: 0,
            sku: "A-1".into(),
        },
        Line {
            no: 0,
            sku: "B-2".into(),
        },
    ];
    let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut lines)
        .await
        .unwrap();
    let mut more = vec![Line {
        no: 0,
        sku: "C-3".into(),
    }];
    let error = Order::append_lines(&db, doc! { "_id": id + 1 }, &mut more)
        .await
        .unwrap_err();
    drop(guard);

    assert_eq!(numbers, [1, 2]);
    let log = log.text();
    let spans = closed(&log, "seqid.append");
    assert_eq!(spans.len(), 2, "one span per append:\n{log}");
    for span in &spans {
        assert!(
            span.contains(r#"sequence="span_order""#)
                && span.contains(r#"collection="span_orders""#)
                && span.contains(r#"field="lines""#),
            "{span}"
        );
    }
    assert!(
        spans[0].contains("items=2") && spans[0].contains(r#"outcome="appended""#),
        "{}",
        spans[0]
    );
    assert!(
        spans[1].contains("items=1") && spans[1].contains(&format!("outcome={error}")),
        "the refused append's span names its error ({error}):\n{}",
        spans[1]
    );
}
