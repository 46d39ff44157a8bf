// A document has one optimistic sequence at most: two optimistic loops in one write could
// not tell whose number was taken. Error at the second one's `strategy`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[seq_id("ticket", strategy = "optimistic")]
    number: i64,
    #[seq_id("revision", strategy = "optimistic")]
    revision: i64,
}

fn main() {}
