// A draft holds `None` until it is numbered: a plain integer would store 0, which the
// unique index would count as a number. The type still says `numbered = "later"`:
// `number_draft` elsewhere adds no error of its own.
use mongodb::bson::doc;
use mongodb::bson::oid::ObjectId;
use seqid::Document;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    #[seq_id("invoice", strategy = "gapless", numbered = "later")]
    number: i64,
}

fn issue(db: &mongodb::Database) {
    let _ = Invoice::number_draft(db, doc! {});
}

fn main() {
    let _ = issue;
}
