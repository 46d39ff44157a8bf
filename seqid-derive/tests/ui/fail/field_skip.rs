// The sequence field must be serialized.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[serde(skip)]
    #[seq_id("ticket")]
    number: i64,
}

fn main() {}
