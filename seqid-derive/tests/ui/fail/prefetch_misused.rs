// prefetch tunes the block strategy, and is `true` or `false`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("ticket", strategy = "optimistic", prefetch = false)]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, seqid::Document)]
#[seq_id("order", strategy = "block", prefetch = 1)]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, seqid::Document)]
#[seq_id("invoice", strategy = "block", prefetch = "no")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
