// serde must write the number under its key.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no]
    #[serde(skip)]
    no: i64,
}

fn main() {}
