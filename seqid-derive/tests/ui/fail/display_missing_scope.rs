// Invoice numbers restart every year: a code without the year repeats every year.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{number:04}")]
    code: String,
}

fn main() {}
