//! serde keys seqid does not need are ignored, on fields and on the container.
use seqid::{Document, Model};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

fn ser_upper<S: Serializer>(value: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&value.to_uppercase())
}

fn de_plain<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    String::deserialize(d)
}

mod as_string {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &u8, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&value.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Serialize, Deserialize, Document)]
#[serde(rename_all = "camelCase")]
#[seq_id("profileid", collection = "profiles")]
struct Profile {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none", default)]
    id: Option<i64>,
    #[serde(default, alias = "fullName", alias = "name")]
    display_name: String,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    tags: Vec<String>,
    #[serde(with = "as_string")]
    level: u8,
    #[serde(serialize_with = "ser_upper", deserialize_with = "de_plain")]
    code: String,
    #[serde(skip)]
    cache: Option<String>,
    #[serde(rename(serialize = "ser", deserialize = "de"), bound(serialize = ""))]
    r#type: u32,
    #[serde(flatten)]
    extra: std::collections::BTreeMap<String, String>,
}

#[derive(Serialize, Document)]
#[serde(rename_all = "snake_case")]
#[seq_id("plain")]
struct Plain {
    _id: i32,
}

#[test]
fn extra_serde_attrs_is_accepted() {
    let p = Profile {
        id: None,
        display_name: String::new(),
        tags: vec![],
        level: 1,
        code: String::new(),
        cache: None,
        r#type: 0,
        extra: Default::default(),
    };
    assert!(p.sequence_id().is_none());
    let _ = (
        p.display_name,
        p.tags,
        p.level,
        p.code,
        p.cache,
        p.r#type,
        p.extra,
    );
    assert_eq!(Profile::SEQUENCE.collection, "profiles");
    assert_eq!(*Plain { _id: 2 }.sequence_id(), 2);
}
