//! Keys may come in any order; the strategy may follow the key that depends on it.
use seqid::{Document, Model, Strategy};
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id(
    "a",
    block_size = 10,
    counters = "ctr",
    strategy = "block",
    collection = "as"
)]
struct A {
    _id: i64,
}

#[derive(Serialize, Document)]
#[seq_id("b", max_attempts = 3, strategy = "optimistic")]
struct B {
    _id: i64,
}

#[test]
fn keys_any_order_is_accepted() {
    assert!(matches!(
        A::SEQUENCE.strategy,
        Strategy::Block { block_size: 10, .. }
    ));
    assert_eq!(A::SEQUENCE.counters, "ctr");
    assert_eq!(A::SEQUENCE.collection, "as");
    assert!(matches!(
        B::SEQUENCE.strategy,
        Strategy::Optimistic {
            max_attempts: Some(3),
            ..
        }
    ));
}
