// The cross-key checks apply to a field's sequence as to the struct's.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[seq_id("ticket", block_size = 10)]
    number: i64,
}

fn main() {}
