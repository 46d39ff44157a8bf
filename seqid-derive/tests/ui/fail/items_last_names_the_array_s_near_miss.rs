// The array is no candidate for its own mark: `line` is one letter off `lines`, the array,
// and nothing else is near, so the message says to add the field.
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
    #[seq_items(last = "line")]
    lines: Vec<Line>,
    mark: i64,
}

fn main() {}
