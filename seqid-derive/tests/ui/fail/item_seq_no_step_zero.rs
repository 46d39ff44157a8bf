// The step is at least 1.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no(step = 0)]
    no: i64,
}

fn main() {}
