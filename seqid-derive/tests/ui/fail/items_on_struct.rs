// #[seq_items] goes on the `Vec` field.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no]
    no: i64,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("order", collection = "orders")]
#[seq_items(last = "lines_last")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    lines: Vec<Line>,
    lines_last: i64,
}

fn main() {}
