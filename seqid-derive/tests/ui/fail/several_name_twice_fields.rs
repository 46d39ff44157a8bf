// Two fields declare the sequence "ticket", set up differently: one name is one sequence.
// Error at the second name.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[seq_id("ticket")]
    number: i64,
    #[seq_id("ticket", strategy = "block", block_size = 10)]
    copy: i64,
}

fn main() {}
