// With a mistake in #[seq_id], uses of the type as a Document elsewhere still compile:
// the user sees the attribute error only.
use seqid::{Document, Model};
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("userid", strategy = "blocks")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, Document)]
#[seq_id(collection = "posts")]
struct Post {
    title: String,
}

fn name_of<D: Document>() -> &'static str {
    D::SEQUENCE.name
}

fn main() {
    let user = User { id: 1 };
    let _: &i64 = user.sequence_id();
    let _ = name_of::<User>();
    let _ = name_of::<Post>();
    let _: &i64 = Post {
        title: String::new(),
    }
    .sequence_id();
}
