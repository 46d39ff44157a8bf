// A scope field that does not exist, one letter off `project`: the message names it.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = "projet")]
    number: i64,
}

fn main() {}
