// With the sequences on fields, the struct's #[seq_id] without a name only sets the
// collection: `strategy` there would not say which sequence it sets up. Error at the key,
// naming the first field sequence.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "tickets", strategy = "block")]
struct Ticket {
    #[seq_id("ticket")]
    number: i64,
    #[seq_id("revision")]
    revision: i64,
}

fn main() {}
