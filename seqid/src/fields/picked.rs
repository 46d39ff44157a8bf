//! A few top-level fields of a document, read through serde without serializing the rest:
//! a scope is one or two fields of a document that may have many, and serializing the
//! whole document to read them cost a scoped insert more than the rest of seqid's work on
//! it (BENCHMARKS.md, *Where a ticket's time goes*). Each field picked is serialized as
//! [`mongodb::bson::to_bson`] would (what the whole document's serialization holds under
//! its name); every other field is passed over unserialized.
//!
//! Only a document serialized as a struct or a map (what `bson::to_document` accepts) is
//! read; anything else, or a picked field that fails to serialize, answers `None`, and the
//! caller serializes the whole document instead, for its error.

use std::fmt;

use mongodb::bson::Bson;
use serde::Serialize;
use serde::ser::{self, Impossible, SerializeMap, SerializeStruct, Serializer};

/// The value of each of `fields` in `doc` as serialized (`None`: not serialized, as a
/// missing or skipped field), in the order of `fields`; `None` if `doc` cannot be read so.
pub(crate) fn top_level<T: Serialize + ?Sized>(
    doc: &T,
    fields: &[&str],
) -> Option<Vec<Option<Bson>>> {
    doc.serialize(Picker { fields }).ok()
}

/// The serializer of the document itself: a struct or a map is read, anything else is
/// not.
struct Picker<'a> {
    fields: &'a [&'a str],
}

/// Why a document was not read: the caller serializes it whole instead.
#[derive(Debug)]
struct NotRead;

impl fmt::Display for NotRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not read field by field")
    }
}

impl std::error::Error for NotRead {}

impl ser::Error for NotRead {
    fn custom<T: fmt::Display>(_: T) -> Self {
        NotRead
    }
}

/// The fields' values, found as the document's fields go by.
struct Found<'a> {
    fields: &'a [&'a str],
    values: Vec<Option<Bson>>,
    /// Where the map's key just given is among `fields`.
    key_at: Option<usize>,
}

impl<'a> Found<'a> {
    fn new(fields: &'a [&'a str]) -> Found<'a> {
        Found {
            fields,
            values: vec![None; fields.len()],
            key_at: None,
        }
    }

    fn field<T: Serialize + ?Sized>(
        &mut self,
        at: Option<usize>,
        value: &T,
    ) -> Result<(), NotRead> {
        if let Some(at) = at {
            self.values[at] = Some(mongodb::bson::to_bson(value).map_err(|_| NotRead)?);
        }
        Ok(())
    }

    fn at(&self, key: &str) -> Option<usize> {
        self.fields.iter().position(|field| *field == key)
    }
}

type Values = Vec<Option<Bson>>;

impl<'a> SerializeStruct for Found<'a> {
    type Ok = Values;
    type Error = NotRead;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), NotRead> {
        self.field(self.at(key), value)
    }

    fn end(self) -> Result<Values, NotRead> {
        Ok(self.values)
    }
}

impl<'a> SerializeMap for Found<'a> {
    type Ok = Values;
    type Error = NotRead;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), NotRead> {
        let key = key.serialize(KeyName)?;
        self.key_at = self.at(&key);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NotRead> {
        let at = self.key_at.take();
        self.field(at, value)
    }

    fn end(self) -> Result<Values, NotRead> {
        Ok(self.values)
    }
}

/// Refuses what is not a struct or a map: each method of the list, answering `$ok`.
macro_rules! not_read {
    ($ok:ty: $($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, NotRead> {
            Err(NotRead)
        })*
    };
}

/// What both serializers below do alike: the types of what they refuse, a newtype is read through, and every value but
/// a string, a struct and a map is refused (the document's serializer reads the last
/// two, a map key's the first).
macro_rules! read_alike {
    ($ok:ty) => {
        type Ok = $ok;
        type Error = NotRead;
        type SerializeSeq = Impossible<$ok, NotRead>;
        type SerializeTuple = Impossible<$ok, NotRead>;
        type SerializeTupleStruct = Impossible<$ok, NotRead>;
        type SerializeTupleVariant = Impossible<$ok, NotRead>;
        type SerializeStructVariant = Impossible<$ok, NotRead>;

        fn serialize_newtype_struct<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            value: &T,
        ) -> Result<$ok, NotRead> {
            value.serialize(self)
        }

        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<$ok, NotRead> {
            Err(NotRead)
        }

        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<$ok, NotRead> {
            Err(NotRead)
        }

        not_read! { $ok:
            serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32),
            serialize_i64(i64), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32),
            serialize_u64(u64), serialize_f32(f32), serialize_f64(f64), serialize_char(char),
            serialize_bytes(&[u8]), serialize_none(), serialize_unit(),
            serialize_unit_struct(&'static str),
            serialize_unit_variant(&'static str, u32, &'static str),
        }
        not_read! { Self::SerializeSeq: serialize_seq(Option<usize>) }
        not_read! { Self::SerializeTuple: serialize_tuple(usize) }
        not_read! { Self::SerializeTupleStruct: serialize_tuple_struct(&'static str, usize) }
        not_read! {
            Self::SerializeTupleVariant: serialize_tuple_variant(&'static str, u32, &'static str, usize)
        }
        not_read! {
            Self::SerializeStructVariant: serialize_struct_variant(&'static str, u32, &'static str, usize)
        }
    };
}

impl<'a> Serializer for Picker<'a> {
    read_alike!(Values);

    type SerializeMap = Found<'a>;
    type SerializeStruct = Found<'a>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Found<'a>, NotRead> {
        Ok(Found::new(self.fields))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Found<'a>, NotRead> {
        Ok(Found::new(self.fields))
    }

    not_read! { Values: serialize_str(&str) }
}

/// A map's key, as the name of a field: a string only (as BSON's documents have).
struct KeyName;

impl Serializer for KeyName {
    read_alike!(String);

    type SerializeMap = Impossible<String, NotRead>;
    type SerializeStruct = Impossible<String, NotRead>;

    fn serialize_str(self, key: &str) -> Result<String, NotRead> {
        Ok(key.to_owned())
    }

    not_read! { Self::SerializeMap: serialize_map(Option<usize>) }
    not_read! { Self::SerializeStruct: serialize_struct(&'static str, usize) }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use mongodb::bson::{doc, oid::ObjectId};
    use serde::Serialize;

    use super::top_level;

    /// Each field as the whole document's serialization holds it.
    fn as_whole<T: Serialize>(doc: &T, fields: &[&str]) -> Vec<Option<Bson>> {
        let whole = mongodb::bson::to_document(doc).unwrap();
        fields.iter().map(|f| whole.get(*f).cloned()).collect()
    }

    use mongodb::bson::Bson;

    #[derive(Serialize)]
    struct Ticket {
        #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
        id: Option<ObjectId>,
        project: Bson,
        #[serde(rename = "repo")]
        repository: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        team: Option<String>,
        #[serde(flatten)]
        more: BTreeMap<String, i64>,
    }

    #[derive(Serialize)]
    struct Plain {
        tenant: i64,
        title: String,
        nested: Ticket2,
    }

    #[derive(Serialize)]
    struct Ticket2 {
        year: i32,
    }

    #[test]
    fn picks_what_the_whole_serialization_holds() {
        let ticket = Ticket {
            id: Some(ObjectId::new()),
            project: Bson::String("apollo".into()),
            repository: 7,
            team: None,
            more: BTreeMap::from([("year".to_owned(), 2026)]),
        };
        let fields = ["project", "repo", "team", "year", "repository", "_id"];
        assert_eq!(
            top_level(&ticket, &fields),
            Some(as_whole(&ticket, &fields))
        );
        let plain = Plain {
            tenant: -4,
            title: "x".into(),
            nested: Ticket2 { year: 1 },
        };
        let fields = ["tenant", "nested", "year"];
        assert_eq!(top_level(&plain, &fields), Some(as_whole(&plain, &fields)));
        let map = doc! { "a": 1, "b": { "c": true } };
        assert_eq!(
            top_level(&map, &["b", "z"]),
            Some(as_whole(&map, &["b", "z"]))
        );
    }

    #[test]
    fn reads_no_document_that_is_not_a_struct_or_a_map() {
        assert_eq!(top_level(&5_i32, &["a"]), None);
        assert_eq!(top_level(&vec![1, 2], &["a"]), None);
        assert_eq!(top_level(&Some(doc! { "a": 1 }), &["a"]), None);
    }

    #[test]
    fn a_field_that_fails_to_serialize_is_left_to_the_whole_document() {
        #[derive(Serialize)]
        struct Big {
            scope: u64,
            other: u64,
        }
        let big = Big {
            scope: u64::MAX,
            other: u64::MAX,
        };
        // u64::MAX has no BSON integer: the whole document's serialization says why.
        assert_eq!(top_level(&big, &["scope"]), None);
        // Not picked, not serialized: no error.
        assert_eq!(top_level(&big, &["none"]), Some(vec![None]));
    }
}
