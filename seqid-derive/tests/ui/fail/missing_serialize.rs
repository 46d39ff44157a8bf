// A document must be Serialize: one error, at the derive, suggesting #[derive(Serialize)].
#[derive(seqid::Document)]
#[seq_id("userid")]
struct User {
    _id: i64,
}

fn main() {}
