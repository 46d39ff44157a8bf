// A layout by hand: a field that finds the counter only with `counter_name`, one field
// per role, a value that is not `_id`, field names MongoDB takes, no scope where the
// layout has no place for it, and a known `counter_holds`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "books")]
struct Book {
    tenant: String,
    #[seq_id("a", counter_field = "field")]
    a: i64,
    #[seq_id("b", counter_name = "model", counter_value = "model")]
    b: i64,
    #[seq_id("c", counter_value = "_id")]
    c: i64,
    #[seq_id("d", counter_value = "count.value", counter_name = "$model")]
    d: i64,
    #[seq_id("e", counter_name = "model", scope = "tenant")]
    e: i64,
    #[seq_id("f", counter_holds = "previous")]
    f: i64,
}

fn main() {}
