// A placeholder names a field of the struct: `yeer` is none, one letter off `year`. Error
// at the placeholder, naming `year`.
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
