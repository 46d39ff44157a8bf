// Scoping by `_id`, unique already, adds nothing.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_id("ticket", scope = "id")]
    number: i64,
}

fn main() {}
