// A document that is not Deserialize inserts, but cannot be found: one error at each call
// that makes a find, in seqid's words, and none at its `.await`.
use seqid::Document;
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("issue_id", collection = "issues")]
struct Issue {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_id("issue_number")]
    number: i64,
    #[seq_display("I-{number}")]
    code: String,
}

async fn run(db: &mongodb::Database) -> Result<(), seqid::Error> {
    let mut issue = Issue { id: 0, number: 0, code: String::new() };
    issue.insert(db).await?;
    let _ = Issue::sequence().find(db, 1).await?;
    let _ = Issue::number_sequence().find(db, 1).await?;
    let _ = Issue::find_by_code(db, "I-1").await?;
    let _ = Issue::number_sequence().find(db, 1).await?;
    Ok(())
}

fn main() {
    let _ = run;
}
