// With a mistake in the derive, calls to its finders elsewhere add no error of their own:
// `find` on a field's sequence, and on an `_id` sequence. The one error of each type is its
// mistake.
use seqid::Document;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = "project", strategy = "blocks")]
    number: i64,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("userid", strategy = "blocks")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    let _: Option<Ticket> = Ticket::sequence().find(&db, 1).scope("x").await?;
    let _: Option<User> = User::sequence().find(&db, 1).await?;
    Ok(())
}

fn main() {
    let _ = run;
}
