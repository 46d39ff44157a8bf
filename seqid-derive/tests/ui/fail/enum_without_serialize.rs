// An enum gets no stand-in impl, so a missing Serialize adds nothing to the error.
#[derive(seqid::Document)]
#[seq_id("userid")]
enum User {
    Admin { _id: i64 },
}

fn main() {}
