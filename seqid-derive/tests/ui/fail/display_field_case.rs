// A placeholder names a field by its Rust name, case included: `{Year}` is `year` but for
// case, which the message names, not `ear`, first and as near by edit distance.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    ear: i32,
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{Year}-{number:04}")]
    code: String,
}

fn main() {}
