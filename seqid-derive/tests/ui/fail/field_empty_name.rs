// The sequence name on a field must not be empty either.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[seq_id("")]
    number: i64,
}

fn main() {}
