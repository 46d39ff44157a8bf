//! strategy = "block", with and without block_size.
use seqid::{Document, Model, Strategy};
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("orderid", collection = "orders", strategy = "block", block_size = 50)]
struct Order {
    #[serde(rename = "_id")]
    id: Option<u32>,
}

#[derive(Serialize, Document)]
#[seq_id("lineid", strategy = "block")]
struct OrderLine {
    _id: u64,
}

#[test]
fn block_is_accepted() {
    assert!(matches!(
        Order::SEQUENCE.strategy,
        Strategy::Block { block_size: 50, .. }
    ));
    assert_eq!(Order::SEQUENCE.strategy_name(), "block");
    assert_eq!(Order::SEQUENCE.collection, "orders");
    assert!(matches!(
        OrderLine::SEQUENCE.strategy,
        Strategy::Block { block_size, .. } if block_size == seqid::Sequence::DEFAULT_BLOCK_SIZE
    ));
    assert_eq!(OrderLine::SEQUENCE.collection, "order_line");
}
