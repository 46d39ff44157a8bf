// The start is not negative.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no(start = -1)]
    no: i64,
}

fn main() {}
