// `last` names a field of the struct: `line_last` is one letter off `lines_last`, which
// the message names.
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
    #[seq_items(last = "line_last")]
    lines: Vec<Line>,
    lines_last: i64,
}

fn main() {}
