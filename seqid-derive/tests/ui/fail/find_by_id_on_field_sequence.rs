// A type whose sequence numbers a field (its `_id` an ObjectId) has no `find_by_id`, which
// would not look in `_id`: the call is refused, and the message names the finder of the
// field. Beside it, the finders that are offered compile: the field's `find_by_number`,
// scoped; `find_by_id` where the sequence numbers `_id`; and another sequence's field's.
use mongodb::bson::oid::ObjectId;
use seqid::Document;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    project: String,
    #[seq_id("ticket", scope = "project")]
    number: i64,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("userid", collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: u32,
    #[seq_id("badge")]
    badge: Option<u64>,
}

async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    let _ = Ticket::find_by_id(&db, 1).await?;
    let _: Option<Ticket> = Ticket::find_by_number(&db, 1).scope("x").await?;
    let _: Option<User> = User::find_by_id(&db, 1).await?;
    let _: Option<User> = User::find_by_badge(&db, 7u64).await?;
    Ok(())
}

fn main() {
    let _ = run;
}
