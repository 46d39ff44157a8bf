// Refused serde attributes among keys seqid ignores, some with complex values, and
// uses of the types as documents: only the refusals are reported, no cascade.
use seqid::{Document, Model};
use serde::{Serialize, Serializer};

fn as_string<S: Serializer>(id: &String, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(id)
}

#[derive(Serialize, Document)]
#[serde(bound(serialize = "T: Serialize"), transparent, crate = "serde")]
#[seq_id("userid")]
struct User<T> {
    #[serde(rename(serialize = "_id", deserialize = "id"), skip_serializing_if = "is_zero")]
    id: i64,
    #[serde(skip)]
    extra: Option<T>,
}

#[derive(Serialize, Document)]
#[seq_id("postid")]
struct Post {
    #[serde(rename = "_id", serialize_with = "as_string")]
    id: String,
}

fn is_zero(id: &i64) -> bool {
    *id == 0
}

fn name_of<D: Document>() -> &'static str {
    D::SEQUENCE.name
}

fn main() {
    let user = User::<u8> { id: 1, extra: None };
    let _: &i64 = user.sequence_id();
    let _ = name_of::<User<u8>>();
    let _ = name_of::<Post>();
    let _ = Post { id: String::new() }.id;
}
