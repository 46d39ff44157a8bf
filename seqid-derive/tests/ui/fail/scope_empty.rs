// An empty `scope` array scopes nothing.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[seq_id("ticket", scope = [])]
    number: i64,
}

fn main() {}
