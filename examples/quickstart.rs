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
    // One client and one `Sequences` handle next to it, for the life of the process (an
    // application keeps both in its state): every task inserting through the handle's
    // databases shares its round trips and blocks of ids. A bare `mongodb::Database`
    // works too, but each call then works alone, at about half the throughput.
    let client = seqid_harness::client().await?; // mongodb::Client::with_uri_str(uri) in an application
    let sequences = seqid::Sequences::new(&client);
    let db = sequences.database("seqid_quickstart"); // derefs to mongodb::Database
    db.drop().await?; // start from the tutorial's empty database

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
