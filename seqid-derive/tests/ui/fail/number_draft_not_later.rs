// `number_draft` on a type numbered by `insert`: one error at the call, in seqid's words,
// saying how to declare the sequence numbered later.
use mongodb::bson::doc;
use seqid::Document;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Document)]
#[seq_id("invoice", collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
    total: u64,
}

async fn run(db: &mongodb::Database) -> Result<(), seqid::Error> {
    Invoice::number_draft(db, doc! {}).await?;
    Ok(())
}

fn main() {
    let _ = run;
}
