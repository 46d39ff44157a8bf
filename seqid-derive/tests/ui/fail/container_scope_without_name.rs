// `scope` on the struct's #[seq_id] without a name: it belongs to the field's sequence.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(scope = "project")]
struct Ticket {
    project: String,
    #[seq_id("ticket")]
    number: i64,
}

fn main() {}
