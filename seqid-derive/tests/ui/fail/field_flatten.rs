// A flattened sequence field is not written under its own key.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[serde(flatten)]
    #[seq_id("ticket")]
    number: i64,
}

fn main() {}
