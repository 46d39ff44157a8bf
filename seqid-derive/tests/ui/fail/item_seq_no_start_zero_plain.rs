// 0 means "not numbered yet" in a plain integer: start = 0 needs an Option.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no(start = 0)]
    no: i64,
}

fn main() {}
