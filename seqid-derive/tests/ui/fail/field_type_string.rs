// A String sequence field: one error, at the type.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[seq_id("ticket")]
    number: String,
}

fn main() {}
