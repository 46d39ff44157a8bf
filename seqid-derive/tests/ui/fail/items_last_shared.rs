// Each array keeps its own mark.
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
    #[seq_items(last = "last")]
    lines: Vec<Line>,
    #[seq_items(last = "last")]
    notes: Vec<Line>,
    last: i64,
}

fn main() {}
