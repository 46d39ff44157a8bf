// MongoEngine and the Go post add 1 per id: ids a step apart would not be theirs.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "users")]
struct User {
    #[seq_id("users.number", layout = "mongoengine", step = 2)]
    number: i64,
    #[seq_id("people", layout = "go", step = 2)]
    person: i64,
}

fn main() {}
