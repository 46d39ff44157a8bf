// The sequence field must be serialized.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[serde(rename = "no", skip_serializing)]
    #[seq_id("ticket")]
    number: i64,
}

fn main() {}
