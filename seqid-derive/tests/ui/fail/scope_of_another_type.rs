// `.scope(...)` takes a value of the scope field's type: a string for an integer scope
// field (issue 47: `"8"` found nothing, `Ok(None)`) does not compile, on the finds and on
// every counter's operation, of the primary sequence and of another one.
use seqid::Document;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    customer: i32,
    #[seq_id("invoice", scope = "customer")]
    number: i64,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("issue_id", collection = "issues")]
struct Issue {
    #[serde(rename = "_id")]
    id: i64,
    repo: String,
    #[seq_id("issue_number", scope = "repo", strategy = "block")]
    number: i64,
}

async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    let _ = Invoice::sequence().last_reserved(&db).scope("8").await?;
    let _ = Invoice::sequence().find(&db, 1).scope("8").await?;
    let _ = Invoice::sequence().set_counter(&db, 7).scope(8.5).await?;
    let _ = Invoice::sequence().sync_counter(&db).scope(String::from("8")).await?;
    let _ = Issue::number_sequence().last_reserved(&db).scope(42).await?;
    Ok(())
}

fn main() {
    let _ = run;
}
