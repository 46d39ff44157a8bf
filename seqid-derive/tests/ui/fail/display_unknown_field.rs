// A placeholder names a field of the struct: `yeer` is none. Error at the format,
// naming the fields there are.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{yeer}-{number:04}")]
    code: String,
}

fn main() {}
