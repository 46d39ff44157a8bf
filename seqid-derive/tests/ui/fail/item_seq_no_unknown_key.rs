// #[seq_no] takes start and step.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no(begin = 1)]
    no: i64,
}

fn main() {}
