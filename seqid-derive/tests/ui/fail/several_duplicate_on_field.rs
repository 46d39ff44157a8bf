// A field holds one number: two #[seq_id] on one field are refused at the second, even
// beside the `_id` sequence.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("ticketid")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_id("number")]
    #[seq_id("revision")]
    number: i64,
}

fn main() {}
