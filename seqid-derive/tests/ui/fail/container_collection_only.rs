// The struct's #[seq_id] names only the collection, and no field carries a sequence:
// one error, and no word about `_id`, which a sequence on a field does not need.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    number: i64,
}

fn main() {}
