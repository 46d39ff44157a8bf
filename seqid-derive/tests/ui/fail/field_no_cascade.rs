// With mistakes in a field's #[seq_id], uses of the type as a Document elsewhere still
// compile: the stand-in impl has the sequence field's type.
use seqid::{Document, Model};
use serde::Serialize;

#[derive(Serialize, Document)]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = "projet", strategy = "blocks")]
    number: Option<u32>,
}

fn main() {
    let ticket = Ticket {
        project: String::new(),
        number: None,
    };
    let _: &Option<u32> = ticket.sequence_id();
    let _ = Ticket::SEQUENCE.field;
}
