// With the sequence on a field, the struct's #[seq_id] without a name only sets the
// collection: a key that sets up the sequence belongs in the field's attribute.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "tickets", strategy = "block")]
struct Ticket {
    #[seq_id("ticket")]
    number: i64,
}

fn main() {}
