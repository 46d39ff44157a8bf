// A gapless sequence takes its ids inside the caller's transaction, one at a time.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("invoice", strategy = "gapless", block_size = 10)]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
