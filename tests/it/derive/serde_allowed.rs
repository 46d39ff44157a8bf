//! serde attributes that only change deserialization, or leave the id as it is, are
//! accepted: `from`/`try_from` and a tag other than `_id` on the struct,
//! `skip_serializing_if`, `default` and `deserialize_with` on the id.
use seqid::{Document, Model};
use serde::{Deserialize, Deserializer, Serialize};

#[derive(Deserialize)]
struct Wire {
    _id: Option<i64>,
    name: String,
}

impl From<Wire> for User {
    fn from(wire: Wire) -> User {
        User {
            id: wire._id,
            name: wire.name,
        }
    }
}

#[derive(Clone, Serialize, Deserialize, Document)]
#[serde(from = "Wire")]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none", default)]
    id: Option<i64>,
    name: String,
}

impl TryFrom<Wire> for Post {
    type Error = String;

    fn try_from(wire: Wire) -> Result<Post, String> {
        Ok(Post {
            _id: u32::try_from(wire._id.ok_or("no id")?).map_err(|e| e.to_string())?,
        })
    }
}

fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Ok(Option::<u32>::deserialize(d)?.unwrap_or(0))
}

#[derive(Serialize, Deserialize, Document)]
#[serde(try_from = "Wire", tag = "kind", deny_unknown_fields)]
#[seq_id("postid")]
struct Post {
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "is_zero")]
    _id: u32,
}

fn is_zero(id: &u32) -> bool {
    *id == 0
}

#[test]
fn serde_allowed_is_accepted() {
    let mut user = User {
        id: None,
        name: "Ann".into(),
    };
    *user.sequence_id_mut() = Some(3);
    assert_eq!(user.clone().id, Some(3));
    assert_eq!(*Post { _id: 7 }.sequence_id(), 7);
    assert_eq!(Post::SEQUENCE.name, "postid");
}
