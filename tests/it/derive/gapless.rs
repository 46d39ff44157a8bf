//! The gapless strategy, and the counter's write concern of the others.
use seqid::layout::CounterWriteConcern;
use seqid::{Document, Model, Strategy, kind};
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("invoice", collection = "invoices", strategy = "gapless")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, Document)]
#[seq_id("orderid", strategy = "block", counter_write_concern = "database")]
struct Order {
    #[serde(rename = "_id")]
    id: Option<u32>,
}

fn counter_backed<T: Document<Kind: kind::WithCounter>>() {}
fn gapless<T: Document<Kind = kind::Gapless>>() {}

async fn in_transaction(db: &mongodb::Database, session: &mut mongodb::ClientSession) {
    let _ = Invoice { id: 0 }.insert(db).session(session).await;
}

#[test]
fn gapless_is_accepted() {
    assert_eq!(Invoice::SEQUENCE.strategy, Strategy::Gapless);
    assert_eq!(Invoice::SEQUENCE.strategy_name(), "gapless");
    assert_eq!(
        Order::SEQUENCE.counter_write_concern,
        CounterWriteConcern::Database
    );
    assert_eq!(
        Invoice::SEQUENCE.counter_write_concern,
        CounterWriteConcern::Majority
    );
    counter_backed::<Invoice>();
    counter_backed::<Order>();
    gapless::<Invoice>();
    let _ = in_transaction;
}
