// Every mistake of the field form is reported in one build, each at its own token.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "tickets", counters = "seqs")]
struct Ticket {
    #[serde(skip)]
    project: String,
    #[serde(with = "text")]
    #[seq_id("ticket", collection = "t", scope = ["project", "missing"], max_attempts = 2)]
    number: i64,
    #[seq_id("other")]
    other: i64,
}

mod text {
    pub fn serialize<S: serde::Serializer>(n: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&n.to_string())
    }
}

fn main() {}
