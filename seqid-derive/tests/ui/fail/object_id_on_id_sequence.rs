// The struct's sequence fills `_id`, and this `_id` is an ObjectId: refused at its type,
// with the attributes that put the sequence on an integer field instead.
use mongodb::bson::oid::ObjectId;
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("invoice", collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    total: u64,
}

fn main() {}
