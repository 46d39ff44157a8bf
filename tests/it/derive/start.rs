//! `start = N` with every strategy, and its default.
use seqid::{Document, Model};
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("a", start = 1000)]
struct A {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, Document)]
#[seq_id("b", strategy = "block", start = 9223372036854775807, block_size = 5)]
struct B {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, Document)]
#[seq_id("c", strategy = "optimistic", start = 42i64)]
struct C {
    #[serde(rename = "_id")]
    id: Option<i64>,
}

#[derive(Serialize, Document)]
#[seq_id("d", strategy = "gapless")]
struct D {
    #[serde(rename = "_id")]
    id: u32,
}

#[test]
fn start_is_accepted() {
    assert_eq!(A::SEQUENCE.start, 1000);
    assert_eq!(B::SEQUENCE.start, i64::MAX);
    assert_eq!(C::SEQUENCE.start, 42);
    assert_eq!(D::SEQUENCE.start, seqid::Sequence::DEFAULT_START);
    assert_eq!(seqid::Sequence::DEFAULT_START, 1);
}
