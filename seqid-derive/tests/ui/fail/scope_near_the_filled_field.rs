// The field the sequence fills is no candidate for its scope: `numbers` is one letter off
// `number`, and nothing else is near, so the message lists the fields.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = "numbers")]
    number: i64,
}

fn main() {}
