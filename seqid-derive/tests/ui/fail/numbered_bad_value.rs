// `numbered` is "insert" (the default) or "later".
use mongodb::bson::oid::ObjectId;
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    #[seq_id("invoice", numbered = "on_issue")]
    number: Option<i64>,
}

fn main() {}
