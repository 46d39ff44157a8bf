// A placeholder names a field of the struct: `month` is none, and none is near. Error at
// the placeholder, naming the fields there are.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{month}-{number:04}")]
    code: String,
}

fn main() {}
