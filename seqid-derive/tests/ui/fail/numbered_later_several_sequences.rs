// `_id` numbered at insert beside a sequence numbered later: it would never be taken,
// and the drafts are stored without seqid's insert.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("invoiceid", collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_id("invoice", numbered = "later")]
    number: Option<i64>,
}

fn main() {}
