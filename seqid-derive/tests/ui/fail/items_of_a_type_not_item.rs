// The items of a #[seq_items] array are `seqid::Item`.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no]
    no: i64,
}

#[derive(Serialize, Deserialize)]
struct Note {
    text: String,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("order", collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "notes_last")]
    notes: Vec<Note>,
    notes_last: i64,
    lines: Vec<Line>,
}

fn main() {}
