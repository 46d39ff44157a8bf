// A width does not keep two placeholders apart: a number wider than its width is written
// whole (year 12026 writes five digits), so `{year:04}{number:04}` is refused too.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("{year:04}{number:04}")]
    code: String,
}

fn main() {}
