// The id field cannot be written by a `with` module, even in a second attribute.
use serde::{Deserialize, Serialize};

mod as_string {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(id: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&id.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id")]
    #[serde(default, with = "as_string")]
    id: i64,
}

fn main() {}
