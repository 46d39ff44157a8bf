// A placeholder shows an integer or a `String`: a `bool` is neither, and a float's text
// does not tell its values apart.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    paid: bool,
    #[seq_display("INV-{year}-{number:04}-{paid}")]
    code: String,
}

fn main() {}
