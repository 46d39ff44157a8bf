// A preset lays the counter out whole: a key that describes it by hand is refused.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("users.id", layout = "mongoengine", counter_value = "seq", counter_holds = "next")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
