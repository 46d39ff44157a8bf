// A module would decide what is written as the sequence field.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[serde(with = "as_text")]
    #[seq_id("ticket")]
    number: i64,
}

mod as_text {
    pub fn serialize<S: serde::Serializer>(n: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&n.to_string())
    }
}

fn main() {}
