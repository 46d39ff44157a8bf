// A getter decides what a remote struct writes: refused on the sequence field (with the
// `remote` it needs, refused too).
use serde::Serialize;

mod other {
    pub struct Ticket {
        number: i64,
    }

    impl Ticket {
        pub fn number(&self) -> i64 {
            self.number
        }
    }
}

#[derive(Serialize, seqid::Document)]
#[serde(remote = "other::Ticket")]
struct TicketDef {
    #[serde(getter = "other::Ticket::number")]
    #[seq_id("ticket")]
    number: i64,
}

fn main() {}
