// A getter decides what a remote struct writes: refused on the id field (with the
// `remote` it needs, refused too).
use serde::Serialize;

mod other {
    pub struct User {
        id: i64,
    }

    impl User {
        pub fn id(&self) -> i64 {
            self.id
        }
    }
}

#[derive(Serialize, seqid::Document)]
#[serde(remote = "other::User")]
#[seq_id("userid")]
struct UserDef {
    #[serde(rename = "_id", getter = "other::User::id")]
    id: i64,
}

fn main() {}
