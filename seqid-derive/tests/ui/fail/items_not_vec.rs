// #[seq_items] goes on a Vec of items.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no]
    no: i64,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("order", collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "lines_last")]
    lines: Line,
    lines_last: i64,
}

fn main() {}
