// A function would decide what is written as the sequence field.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[serde(serialize_with = "as_text")]
    #[seq_id("ticket")]
    number: i64,
}

fn as_text<S: serde::Serializer>(n: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&n.to_string())
}

fn main() {}
