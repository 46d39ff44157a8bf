// One #[seq_id] per field: error at the second.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[seq_id("ticket")]
    #[seq_id("other")]
    number: i64,
}

fn main() {}
