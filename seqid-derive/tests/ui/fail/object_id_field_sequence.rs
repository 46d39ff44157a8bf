// A field's sequence on an ObjectId field: refused at its type.
use mongodb::bson::oid::ObjectId;
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    #[seq_id("ticket")]
    number: Option<ObjectId>,
}

fn main() {}
