// A document with a natural key must be Serialize too: one error, at the derive, as without
// the key (the `NaturalKeyed` impl adds none of its own).
#[derive(seqid::Document)]
#[seq_id("userid")]
struct User {
    _id: i64,
    #[seq_key]
    email: String,
}

fn main() {}
