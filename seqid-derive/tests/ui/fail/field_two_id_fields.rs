// With the sequence on a field, `_id` is optional, but still one field at most.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    _id: i64,
    #[serde(rename = "_id")]
    id: i64,
    #[seq_id("ticket")]
    number: i64,
}

fn main() {}
