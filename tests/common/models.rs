//! Model types shared by the tests and the worker processes they start.

use serde::{Deserialize, Serialize};

/// Written by several processes at once with the counters strategy.
#[derive(Debug, Clone, Serialize, Deserialize, seqid::Document)]
#[seq_id("multi_counters", collection = "multi_counters")]
pub struct CountedDoc {
    #[serde(rename = "_id")]
    pub id: i64,
    pub writer: String,
    pub n: u32,
}

/// Written by several processes at once with the optimistic loop.
#[derive(Debug, Clone, Serialize, Deserialize, seqid::Document)]
#[seq_id(
    "multi_optimistic",
    collection = "multi_optimistic",
    strategy = "optimistic",
    max_attempts = 64
)]
pub struct OptimisticDoc {
    #[serde(rename = "_id")]
    pub id: i64,
    pub writer: String,
    pub n: u32,
}

/// Written by several processes at once with blocks of 10 ids.
#[derive(Debug, Clone, Serialize, Deserialize, seqid::Document)]
#[seq_id(
    "multi_block",
    collection = "multi_block",
    strategy = "block",
    block_size = 10
)]
pub struct BlockDoc {
    #[serde(rename = "_id")]
    pub id: i64,
    pub writer: String,
    pub n: u32,
}

/// A document made by writer `writer` as its `n`-th.
pub trait Written: seqid::Document + Send + 'static {
    fn written(writer: &str, n: u32) -> Self;
}

macro_rules! written {
    ($($t:ty),*) => {$(
        impl Written for $t {
            fn written(writer: &str, n: u32) -> Self {
                Self { id: 0, writer: writer.to_owned(), n }
            }
        }
    )*};
}

written!(CountedDoc, OptimisticDoc, BlockDoc);
