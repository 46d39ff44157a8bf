// #[serde(remote)] serializes the remote type; the struct itself is not Serialize, and
// the stand-in impl adds no error about it.
use serde::Serialize;

mod other {
    pub struct User {
        pub id: i64,
    }
}

#[derive(Serialize, seqid::Document)]
#[serde(remote = "other::User")]
#[seq_id("userid")]
struct UserDef {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
