// #[serde(into)] serializes another type: the id seqid fills is not what is written.
use serde::Serialize;

#[derive(Serialize)]
struct Wire {
    _id: i64,
}

impl From<User> for Wire {
    fn from(user: User) -> Wire {
        Wire { _id: user.id }
    }
}

#[derive(Clone, Serialize, seqid::Document)]
#[serde(into = "Wire")]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
