//! The MongoDB tutorial "Create an Auto-Incrementing Sequence Field", with seqid.
//!
//! Run it with `cargo run --example quickstart`. It uses `MONGODB_URI` if set, else a
//! `mongod` on PATH, else a local SecantusDB server that it installs on first use.

use mongodb::bson::{Document as BsonDocument, doc};
use seqid::Document;
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("userid", collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = seqid_harness::fresh_database("seqid_quickstart").await?;

    let mut sarah = User {
        id: 0,
        name: "Sarah C.".into(),
    };
    sarah.insert(&db).await?;
    let mut bob = User {
        id: 0,
        name: "Bob D.".into(),
    };
    bob.insert(&db).await?;

    // db.users.find()
    let users = db.collection::<BsonDocument>("users");
    let mut cursor = users.find(doc! {}).sort(doc! { "_id": 1 }).await?;
    while cursor.advance().await? {
        println!("{}", cursor.deserialize_current()?);
    }
    // db.counters.find()
    let counter = db
        .collection::<BsonDocument>("counters")
        .find_one(doc! { "_id": "userid" })
        .await?;
    println!(
        "counter: {}",
        counter.ok_or("the counter document is missing")?
    );

    db.drop().await?;
    Ok(())
}
