// The mark is a field of its own, not a sequence's number.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no]
    no: i64,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "number")]
    lines: Vec<Line>,
    #[seq_id("order")]
    number: i64,
}

fn main() {}
