// MongoEngine's counter has no scope, nor mongoose-auto-increment's.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    project: String,
    #[seq_id("tickets.number", scope = "project", layout = "mongoengine")]
    number: i64,
    #[seq_id("Ticket", scope = "project", layout = "mongoose-auto-increment")]
    rank: Option<i64>,
}

fn main() {}
