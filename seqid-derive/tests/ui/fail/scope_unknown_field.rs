// A scope field that does not exist: the message lists the fields.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = "projet")]
    number: i64,
}

fn main() {}
