// One sequence per struct: a second field's #[seq_id] is refused, naming the first.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[seq_id("ticket")]
    number: i64,
    #[seq_id("revision")]
    revision: i64,
}

fn main() {}
