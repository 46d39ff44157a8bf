// The optimistic strategy numbers from the largest stored id at insert: it keeps no
// counter to number a draft from.
use mongodb::bson::oid::ObjectId;
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    #[seq_id("invoice", strategy = "optimistic", numbered = "later")]
    number: Option<i64>,
}

fn main() {}
