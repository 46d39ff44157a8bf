// The number field is an integer, or an Option of one.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no]
    no: String,
}

fn main() {}
