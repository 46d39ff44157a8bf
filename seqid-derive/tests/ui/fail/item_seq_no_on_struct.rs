// #[seq_no] goes on the number field.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
#[seq_no]
struct Line {
    #[seq_no]
    no: i64,
}

fn main() {}
