//! Natural keys: the fields that identify a document before it has an id (an email, a
//! tenant and an external reference), declared with `#[seq_key]` or named per call. A key
//! is read from the document as serialized (what the server stores, and what the key's
//! unique index sees), and becomes the equality filter `find_or_insert` looks the
//! document up with.
//!
//! A key value must name one document: a missing field and `null` are refused (a unique
//! index keeps one document with the field missing, which would make every keyless
//! document "the same"), and so is an array (a unique index holds each element apart, so
//! a lookup by the whole array and the index disagree on what is a duplicate). Numbers
//! compare by value in the filter, so a key stored as Int32 by another tool is found by
//! an `i64`.

use mongodb::bson::{Bson, Document as BsonDocument, doc};

use crate::base::error::{Error, ErrorKind};
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;

/// What [`find_or_insert`](crate::Document::find_or_insert) did: the document passed in
/// now holds the stored one either way.
///
/// ```
/// let entry = seqid::Entry::Found;
/// assert!(entry.is_found() && !entry.is_inserted());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entry {
    /// No document held the key: this call inserted the document, with the next id.
    Inserted,
    /// A document held the key: the document passed in was replaced by it (its ids, its
    /// codes, its fields as stored), and no id was kept.
    Found,
}

impl Entry {
    /// Whether this call inserted the document.
    ///
    /// ```
    /// assert!(seqid::Entry::Inserted.is_inserted());
    /// ```
    pub fn is_inserted(self) -> bool {
        self == Entry::Inserted
    }

    /// Whether the document was there already.
    ///
    /// ```
    /// assert!(seqid::Entry::Found.is_found());
    /// ```
    pub fn is_found(self) -> bool {
        self == Entry::Found
    }
}

/// The fields of a natural key, as serialized, in order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NaturalKey {
    pub fields: &'static [&'static str],
}

impl NaturalKey {
    /// The key `T` declares (`#[seq_key]`), checked by the derive.
    pub(crate) fn declared<T: Model>() -> Self {
        NaturalKey {
            fields: T::NATURAL_KEY,
        }
    }

    /// A key named per call (`.by(...)`): refused when empty, or when it names a
    /// field the insert fills (a number of one of `T`'s sequences, a display code, or the
    /// `_id` a field sequence's insert makes), which no document holds before it is stored.
    pub(crate) fn named<T: Model>(fields: &'static [&'static str]) -> Result<Self, Error> {
        let seq = &T::SEQUENCE;
        let invalid = |reason: String| {
            Error::new(
                seq,
                ErrorKind::InvalidNaturalKey {
                    key: shown(fields).into(),
                    reason: reason.into(),
                },
            )
        };
        if fields.is_empty() {
            return Err(invalid(
                "it names no field: name the field(s) that identify a document, e.g. \
                 find_or_insert(&db).by(&[\"email\"])"
                    .into(),
            ));
        }
        let filled = std::iter::once(seq)
            .chain(T::OTHERS)
            .map(|seq| (seq.field, "a number the insert takes"))
            .chain(
                T::DISPLAYS
                    .iter()
                    .map(|d| (d.field, "a code the insert writes")),
            );
        for (field, what) in filled {
            if fields.contains(&field) {
                return Err(invalid(format!(
                    "`{field}` holds {what}, which no document has before it is stored"
                )));
            }
        }
        let twice = (1..fields.len()).find(|&at| fields[..at].contains(&fields[at]));
        if let Some(at) = twice {
            return Err(invalid(format!("`{}` is named twice", fields[at])));
        }
        if let Some(dotted) = fields
            .iter()
            .find(|f| f.contains('.') || f.starts_with('$'))
        {
            return Err(invalid(format!(
                "`{dotted}` is not a top-level field name: a natural key is made of the \
                 document's own fields"
            )));
        }
        Ok(NaturalKey { fields })
    }

    /// The key as shown in messages: `(email)`, `(tenant, email)`.
    pub(crate) fn shown(&self) -> String {
        shown(self.fields)
    }

    /// The index keys `{ <field>: 1, ... }`, and the name MongoDB gives such an index by
    /// default (`tenant_1_email_1`).
    pub(crate) fn index(&self) -> (BsonDocument, String) {
        crate::base::server::ascending(self.fields)
    }

    /// The equality filter on the key's values in `serialized` (a document as it is
    /// stored), or why it names no one document.
    pub(crate) fn filter(
        &self,
        seq: &'static Sequence,
        serialized: &BsonDocument,
    ) -> Result<BsonDocument, Error> {
        let mut filter = doc! {};
        for &field in self.fields {
            let (value, reason) = match serialized.get(field) {
                None => (
                    "missing",
                    "the document does not hold the field (a unique index would take \
                     every document without it for one)",
                ),
                Some(Bson::Null) => (
                    "null",
                    "a null key names no one document (a unique index takes every \
                     null for one value)",
                ),
                Some(Bson::Array(_)) => (
                    "an array",
                    "a unique index holds each element of an array apart, so the \
                     whole array names no one document",
                ),
                Some(value) => {
                    filter.insert(field, value.clone());
                    continue;
                }
            };
            return Err(Error::new(
                seq,
                ErrorKind::InvalidNaturalKey {
                    key: format!("{} ({field} = {value})", self.shown()).into(),
                    reason: reason.into(),
                },
            ));
        }
        Ok(filter)
    }
}

/// The key's values in `filter` as bytes that equal values share: integers of any width
/// as Int64 (a server may narrow them, and the filter matches by value), so that a
/// document found is matched to the one asked for.
pub(crate) fn normalized(filter: &BsonDocument) -> Vec<u8> {
    let mut widened = filter.clone();
    for (_, value) in widened.iter_mut() {
        if let Bson::Int32(v) = *value {
            *value = Bson::Int64(i64::from(v));
        }
    }
    mongodb::bson::to_vec(&widened).unwrap_or_default()
}

/// `(email)`, `(tenant, email)`.
fn shown(fields: &[&str]) -> String {
    format!("({})", fields.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::sequence::construct::counters;
    use crate::schema::sequence::testing::on_id;

    const SEQ: Sequence = on_id("customer", "customers", counters());

    #[test]
    fn a_filter_holds_every_key_value_and_refuses_what_names_no_one_document() {
        let key = NaturalKey {
            fields: &["tenant", "email"],
        };
        let stored = doc! { "_id": 0, "tenant": 7_i32, "email": "a@b.c", "name": "Ada" };
        assert_eq!(
            key.filter(&SEQ, &stored).unwrap(),
            doc! { "tenant": 7_i32, "email": "a@b.c" }
        );
        for (value, shown) in [
            (None, "missing"),
            (Some(Bson::Null), "null"),
            (Some(Bson::Array(vec![Bson::Int32(1)])), "an array"),
        ] {
            let mut stored = doc! { "tenant": 7_i32 };
            if let Some(value) = value {
                stored.insert("email", value);
            }
            let error = key.filter(&SEQ, &stored).unwrap_err();
            let message = error.to_string();
            assert!(
                message.contains(&format!("(tenant, email) (email = {shown})"))
                    && message
                        .starts_with("sequence `customer`: cannot find or insert in `customers`"),
                "{message}"
            );
        }
    }

    #[test]
    fn integers_of_any_width_normalize_alike() {
        let narrow = doc! { "tenant": 7_i32, "email": "a" };
        let wide = doc! { "tenant": 7_i64, "email": "a" };
        assert_eq!(normalized(&narrow), normalized(&wide));
        assert_ne!(
            normalized(&narrow),
            normalized(&doc! { "tenant": 8, "email": "a" })
        );
    }

    #[test]
    fn the_index_is_named_as_mongodb_names_it() {
        let key = NaturalKey {
            fields: &["tenant", "email"],
        };
        let (keys, name) = key.index();
        assert_eq!(keys, doc! { "tenant": 1, "email": 1 });
        assert_eq!(name, "tenant_1_email_1");
    }
}
