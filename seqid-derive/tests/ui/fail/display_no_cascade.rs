// With a mistake in a format, uses of the type elsewhere still compile, its finder too: the
// one error is the format's.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{number:04}")]
    code: String,
}

async fn find(db: mongodb::Database) -> Result<Option<Invoice>, seqid::Error> {
    Invoice::find_by_code(&db, "INV-2026-0001").await
}

fn main() {
    let _ = find;
}
