// Several scope fields take a tuple of their values, in the declared order, each of its
// field's type; an unscoped sequence takes no `.scope(...)`.
use seqid::Document;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    tenant: String,
    year: i32,
    #[seq_id("invoice", scope = ["tenant", "year"])]
    number: i64,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("userid", collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    let _ = Invoice::sequence().last_reserved(&db).scope((2026, "acme")).await?;
    let _ = Invoice::sequence().last_reserved(&db).scope("acme").await?;
    let _ = Invoice::sequence().last_reserved(&db).scope(("acme", 2026, 1)).await?;
    let _ = User::sequence().last_reserved(&db).scope("acme").await?;
    Ok(())
}

fn main() {
    let _ = run;
}
