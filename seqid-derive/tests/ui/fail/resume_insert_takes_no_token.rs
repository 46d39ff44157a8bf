// A reserved id is given to `insert`; `resume_insert` finishes an insert under the id the
// document already carries, and has no `reserved` setter.
use seqid::Document;

#[derive(serde::Serialize, Document)]
#[seq_id("userid", collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

async fn resume(db: seqid::Database) -> Result<i64, seqid::Error> {
    let token = User::reserve_id(&db).await?;
    let mut user = User { id: 0 };
    user.resume_insert(&db).reserved(token).await
}

fn main() {}
