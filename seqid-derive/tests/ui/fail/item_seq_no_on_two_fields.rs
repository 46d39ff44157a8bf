// An item has one number field.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no]
    no: i64,
    #[seq_no]
    other: i64,
}

fn main() {}
