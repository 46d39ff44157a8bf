// Beside a sequence on another field, the insert fills an `Option<ObjectId>` `_id`.
use mongodb::bson::oid::ObjectId;
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    #[seq_key]
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    #[seq_id("ticket")]
    number: i64,
}

fn main() {}
