// Drafts are stored with the driver: a sequence numbered at insert beside sequences
// numbered later would never be taken (said once, at the first numbered later).
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<mongodb::bson::oid::ObjectId>,
    #[seq_id("invoice", numbered = "later")]
    number: Option<i64>,
    #[seq_id("ledger", numbered = "later")]
    ledger: Option<i64>,
    #[seq_id("page")]
    page: Option<i64>,
}

fn main() {}
