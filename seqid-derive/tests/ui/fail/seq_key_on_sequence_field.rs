// The insert takes the sequence's number: no document holds it before it is stored.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = "project")]
    #[seq_key]
    number: i64,
}

fn main() {}
