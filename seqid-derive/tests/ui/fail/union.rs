// A union cannot be a document (nor Serialize): one error, at `union`.
#[derive(seqid::Document)]
#[seq_id("userid")]
union User {
    _id: i64,
    other: u64,
}

fn main() {}
