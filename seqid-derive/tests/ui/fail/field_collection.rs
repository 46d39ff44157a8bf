// `collection` goes on the struct, not on the field's sequence.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[seq_id("ticket", collection = "tickets")]
    number: i64,
}

fn main() {}
