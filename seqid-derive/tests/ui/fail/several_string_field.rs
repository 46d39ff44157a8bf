// A field sequence beside the `_id` one still needs a field that holds a number: a
// `String` is refused at its type (once for each accessor the derive writes for it).
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("ticketid")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_id("n")]
    n: String,
}

fn main() {}
