//! Scopes: a sequence declared with `scope = ...` counts separately for each combination
//! of its scope fields' values, as issue numbers count per repository.
//!
//! A scope value is read from the document as serialized (what the server stores, and
//! what a unique index on the scope fields sees), and normalized so that one scope has
//! one spelling: integers of any width are Int64, and a missing field is `null` (as
//! MongoDB's equality and its indexes treat them). Strings, integers, ObjectIds,
//! booleans and `null` are scope values; any other type is refused
//! ([`ErrorKind::InvalidScope`]): a Double may hold a fraction, an array is indexed element by
//! element, and a subdocument compares by field order, none of which names one scope.
//!
//! The counter of a scope is, in the counters collection,
//! `{ _id: '["<name>",<value>,...]', sequence: "<name>", scope: { <field>: <value>, ... }, seq }`:
//! its `_id` is the JSON array of the sequence name and the scope values in the declared
//! order (a string as a JSON string, an integer as a number, an ObjectId as
//! `{"$oid":"<hex>"}`, `true`, `false`, `null`). JSON writes each value one way and
//! escapes what a string holds, so no two scopes share a counter whatever their values
//! hold (no delimiter to collide with); sequence names cannot start with `[`, so no
//! unscoped counter has such an `_id`. `sequence` and `scope` are written when the
//! counter is created, for people and other tools:
//! `{ sequence: "ticket", "scope.project": "apollo" }` finds a counter. A string `_id`,
//! rather than a subdocument, because a subdocument compares field by field in order,
//! and upserts may write its fields in another order than the filter's. An unscoped
//! sequence keeps the tutorial's `{ _id: "<name>", seq }`.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use serde::Serialize;

use crate::base::error::{Error, ErrorKind};
use crate::fields::picked;
use crate::schema::sequence::Sequence;

/// The scope of one document (or of an admin call): the normalized value of each scope
/// field, or nothing for an unscoped sequence. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Scope(Option<Arc<Values>>);

struct Values {
    /// Field → normalized value, in the declared order.
    fields: BsonDocument,
    /// `fields` as BSON bytes: equal scopes have equal bytes, which hash.
    bytes: Vec<u8>,
}

impl Scope {
    /// The scope of an unscoped sequence.
    pub(crate) const NONE: Scope = Scope(None);

    /// The scope `doc` belongs to; [`Scope::NONE`] for an unscoped sequence, at no cost.
    pub(crate) fn of<T: Serialize>(seq: &'static Sequence, doc: &T) -> Result<Scope, Error> {
        if seq.scope.is_empty() {
            return Ok(Scope::NONE);
        }
        // The scope fields alone, the rest of the document unserialized; else the whole
        // document, whose serialization says what is wrong with it.
        if let Some(values) = picked::top_level(doc, seq.scope) {
            return Self::from_fields(seq, |at, _| values[at].clone());
        }
        let serialized = mongodb::bson::to_document(doc).map_err(|error| {
            Error::new(
                seq,
                ErrorKind::InvalidScope {
                    scope: "(the document)".into(),
                    reason: format!(
                        "the document could not be serialized to read its scope: {error}"
                    )
                    .into(),
                },
            )
        })?;
        Self::from_fields(seq, |_, field| serialized.get(field).cloned())
    }

    /// The scope a caller names (`.scope(...)` on an admin call or a find): the value of
    /// the one scope field, or a tuple (array) of values in the declared order.
    pub(crate) fn given(seq: &'static Sequence, value: Option<&Bson>) -> Result<Scope, Error> {
        let invalid = |reason: String| {
            Error::new(
                seq,
                ErrorKind::InvalidScope {
                    scope: value.map_or_else(|| "(none)".into(), |v| v.to_string().into()),
                    reason: reason.into(),
                },
            )
        };
        match (seq.scope, value) {
            ([], None) => Ok(Scope::NONE),
            (fields, None) => Err(invalid(format!(
                "the sequence counts per {}: name the scope with `.scope(...)`",
                listed(fields)
            ))),
            ([], Some(_)) => Err(invalid(
                "the sequence has no scope: call without `.scope(...)`".into(),
            )),
            ([_], Some(value)) => Self::from_fields(seq, |_, _| Some(value.clone())),
            (fields, Some(Bson::Array(values))) if values.len() == fields.len() => {
                Self::from_fields(seq, |at, _| values.get(at).cloned())
            }
            (fields, Some(_)) => Err(invalid(format!(
                "the sequence counts per {}: give a tuple of {} values, in that order",
                listed(fields),
                fields.len()
            ))),
        }
    }

    /// The scope whose values `value` gives, by the scope field's position and name.
    fn from_fields(
        seq: &'static Sequence,
        value: impl Fn(usize, &str) -> Option<Bson>,
    ) -> Result<Scope, Error> {
        if seq.scope.is_empty() {
            return Ok(Scope::NONE);
        }
        let mut fields = BsonDocument::new();
        for (at, &field) in seq.scope.iter().enumerate() {
            let normalized = normalize(value(at, field)).map_err(|why| {
                Error::new(
                    seq,
                    ErrorKind::InvalidScope {
                        scope: format!("{field}: {}", value(at, field).unwrap_or(Bson::Null))
                            .into(),
                        reason: why.into(),
                    },
                )
            })?;
            fields.insert(field, normalized);
        }
        let mut bytes = Vec::new();
        // Writing a document of plain values to memory cannot fail.
        let _ = fields.to_writer(&mut bytes);
        Ok(Scope(Some(Arc::new(Values { fields, bytes }))))
    }

    /// The scope fields and their values, to filter on: `{}` when unscoped. A `null`
    /// value matches a missing field too, as the scope of such a document is `null`.
    pub(crate) fn filter(&self) -> BsonDocument {
        self.0
            .as_ref()
            .map_or_else(BsonDocument::new, |values| values.fields.clone())
    }

    /// The `_id` of this scope's counter of `seq` (see the module's notes).
    pub(crate) fn counter_id(&self, seq: &Sequence) -> Bson {
        let Some(values) = &self.0 else {
            return Bson::String(seq.name.to_owned());
        };
        let mut key = vec![serde_json::Value::from(seq.name)];
        key.extend(values.fields.values().map(json));
        Bson::String(serde_json::Value::Array(key).to_string())
    }

    /// What the `_id` of every scope's counter of `seq` starts with: `["<name>",`.
    pub(crate) fn counter_id_prefix(seq: &Sequence) -> String {
        format!("[{},", serde_json::Value::from(seq.name))
    }

    /// The scope whose counter of `seq` has the `_id` `id` ([`counter_id`](Self::counter_id)
    /// read back), or `None` if `id` is not one.
    pub(crate) fn of_counter_id(seq: &'static Sequence, id: &str) -> Option<Scope> {
        let serde_json::Value::Array(key) = serde_json::from_str(id).ok()? else {
            return None;
        };
        let (name, values) = key.split_first()?;
        if name.as_str() != Some(seq.name) || values.len() != seq.scope.len() {
            return None;
        }
        let values: Vec<Bson> = values.iter().map(from_json).collect::<Option<_>>()?;
        Self::from_fields(seq, |at, _| values.get(at).cloned()).ok()
    }

    /// The scope of a mongoose-sequence counter's `reference_value` (`null`: unscoped).
    pub(crate) fn of_reference_value(seq: &'static Sequence, value: &Bson) -> Option<Scope> {
        match value {
            Bson::Null if seq.scope.is_empty() => Some(Scope::NONE),
            Bson::Document(fields) => Self::of_stored(seq, fields),
            _ => None,
        }
    }

    /// The fields a new counter of this scope is created with besides `_id` and `seq`,
    /// for people and other tools: `{ sequence, scope }`; none when unscoped.
    pub(crate) fn counter_fields(&self, seq: &Sequence) -> Option<BsonDocument> {
        let values = self.0.as_ref()?;
        Some(doc! { "sequence": seq.name, "scope": values.fields.clone() })
    }

    /// This scope as mongoose-sequence writes it in a counter's `reference_value`: a
    /// document of the scope fields in the order JavaScript's `Array.prototype.sort`
    /// puts their names (UTF-16 code units), each integer an Int32 where it fits (as
    /// Node.js writes a number), and `null` when unscoped. The counter is found by
    /// equality with that document, so its order and types are the tool's.
    pub(crate) fn reference_value(&self) -> Bson {
        let Some(values) = &self.0 else {
            return Bson::Null;
        };
        let mut fields: Vec<(String, Bson)> = values.fields.clone().into_iter().collect();
        fields.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
        for (_, value) in &mut fields {
            if let Bson::Int64(n) = *value {
                *value = i32::try_from(n).map_or(Bson::Int64(n), Bson::Int32);
            }
        }
        Bson::Document(fields.into_iter().collect())
    }

    /// " in scope { ... }", or nothing when unscoped: for messages.
    pub(crate) fn in_scope(&self) -> String {
        self.0
            .as_ref()
            .map_or_else(String::new, |_| format!(" in scope {self}"))
    }

    /// The scope of a stored document, read back (`None`: its values are not scope
    /// values, so it belongs to no scope seqid counts).
    pub(crate) fn of_stored(seq: &'static Sequence, stored: &BsonDocument) -> Option<Scope> {
        Self::from_fields(seq, |_, field| stored.get(field).cloned()).ok()
    }

    /// The values as bytes, which equal scopes share (nothing when unscoped).
    fn bytes(&self) -> &[u8] {
        self.0.as_ref().map_or(&[], |values| &values.bytes)
    }
}

/// Where a document's id is: its scope and its number, unique in the collection (the
/// number alone for an unscoped sequence).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub scope: Scope,
    pub id: i64,
}

/// `items` grouped by scope: the groups in the order their scope first appears, the
/// items of each in order (one group, at the cost of one lookup each, when unscoped).
pub(crate) fn grouped<T>(items: impl IntoIterator<Item = (Scope, T)>) -> Vec<(Scope, Vec<T>)> {
    let mut groups: Vec<(Scope, Vec<T>)> = Vec::new();
    // foldhash, as the handle's maps: one lookup per document of an `insert_many`.
    let mut at: foldhash::HashMap<Scope, usize> = foldhash::HashMap::default();
    for (scope, item) in items {
        match at.get(&scope) {
            Some(&index) => groups[index].1.push(item),
            None => {
                at.insert(scope.clone(), groups.len());
                groups.push((scope, vec![item]));
            }
        }
    }
    groups
}

/// The one spelling of a scope value, or why it cannot be one.
fn normalize(value: Option<Bson>) -> Result<Bson, &'static str> {
    match value {
        None | Some(Bson::Null) => Ok(Bson::Null),
        Some(Bson::Int32(n)) => Ok(Bson::Int64(n.into())),
        Some(value @ (Bson::Int64(_) | Bson::String(_) | Bson::ObjectId(_) | Bson::Boolean(_))) => {
            Ok(value)
        }
        Some(Bson::Double(_) | Bson::Decimal128(_)) => Err(
            "a scope value is a string, an integer, an ObjectId, a boolean or null; a Double \
             or Decimal128 may hold a fraction: store the scope as an integer or a string",
        ),
        Some(Bson::Array(_)) => Err(
            "a scope value is a string, an integer, an ObjectId, a boolean or null; an array \
             is indexed element by element, so it names no single scope",
        ),
        Some(Bson::Document(_)) => Err(
            "a scope value is a string, an integer, an ObjectId, a boolean or null; a \
             subdocument compares by field order: scope by its fields instead",
        ),
        Some(_) => Err(
            "a scope value is a string, an integer, an ObjectId, a boolean or null; this type \
             is not one",
        ),
    }
}

/// A normalized scope value in JSON, one way each (see the module's notes).
fn json(value: &Bson) -> serde_json::Value {
    match value {
        Bson::String(s) => s.as_str().into(),
        Bson::Int64(n) => (*n).into(),
        Bson::Boolean(b) => (*b).into(),
        Bson::ObjectId(id) => serde_json::json!({ "$oid": id.to_hex() }),
        // `normalize` lets no other type through.
        _ => serde_json::Value::Null,
    }
}

/// A scope value read back from a counter's `_id`: [`json`] undone.
fn from_json(value: &serde_json::Value) -> Option<Bson> {
    use serde_json::Value;
    match value {
        Value::String(s) => Some(Bson::String(s.clone())),
        Value::Number(n) => n.as_i64().map(Bson::Int64),
        Value::Bool(b) => Some(Bson::Boolean(*b)),
        Value::Null => Some(Bson::Null),
        Value::Object(object) => object
            .get("$oid")?
            .as_str()
            .and_then(|hex| mongodb::bson::oid::ObjectId::parse_str(hex).ok())
            .map(Bson::ObjectId),
        Value::Array(_) => None,
    }
}

fn listed(fields: &[&str]) -> String {
    let quoted: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
    quoted.join(", ")
}

impl PartialEq for Scope {
    fn eq(&self, other: &Self) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for Scope {}

impl Hash for Scope {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bytes().hash(state);
    }
}

/// `{ project: "apollo" }`, or nothing when unscoped: for messages.
impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0
            .as_ref()
            .map_or(Ok(()), |values| write!(f, "{}", values.fields))
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scope({self})")
    }
}

/// The scope a caller names with `.scope(...)`, kept as given until the call runs: a
/// value serde cannot write is reported then, as any other invalid scope.
#[derive(Default)]
pub(crate) struct GivenScope(Option<Result<Bson, String>>);

impl GivenScope {
    /// The scope `value` names, of the kind `S` (see [`crate::scoped`]).
    pub(crate) fn new<S>(value: impl crate::schema::scoped::Names<S>) -> Self {
        GivenScope(Some(value.scope_values()))
    }

    /// The scope `value` names, its type unchecked at compile time (`.scope_unchecked`):
    /// checked when the call runs against the scope fields' Rust types.
    pub(crate) fn unchecked(value: impl Serialize) -> Self {
        Self::new::<crate::schema::scoped::Unchecked>(value)
    }

    pub(crate) fn resolve(&self, seq: &'static Sequence) -> Result<Scope, Error> {
        match &self.0 {
            None => Scope::given(seq, None),
            Some(Ok(value)) => {
                check_types(seq, value)?;
                Scope::given(seq, Some(value))
            }
            Some(Err(error)) => Err(Error::new(
                seq,
                ErrorKind::InvalidScope {
                    scope: "(given)".into(),
                    reason: error.clone().into(),
                },
            )),
        }
    }
}

/// A scope named at run time, value by value against the scope fields' Rust types
/// ([`Sequence::scope_types`]): a value no document of the type can hold (`"8"` for an
/// `i32` field, 5,000,000,000 for an `i32`) is refused naming the type. Null names the
/// documents without a value, whatever the type; a type seqid cannot read, any value. The
/// number of values is [`Scope::given`]'s to check.
pub(crate) fn check_types(seq: &'static Sequence, value: &Bson) -> Result<(), Error> {
    let values: Vec<&Bson> = match (seq.scope, value) {
        ([_], value) => vec![value],
        (fields, Bson::Array(values)) if values.len() == fields.len() => values.iter().collect(),
        _ => return Ok(()),
    };
    for ((field, ty), value) in seq.scope.iter().zip(seq.scope_types).zip(values) {
        if let Some(why) = type_refuses(ty, value) {
            return Err(Error::new(
                seq,
                ErrorKind::InvalidScope {
                    scope: format!("{field}: {value}").into(),
                    reason: format!("the scope field `{field}` is {ty}: {why}").into(),
                },
            ));
        }
    }
    Ok(())
}

/// Why a field of the Rust type `ty` (as [`Sequence::scope_types`] spells it) can never
/// hold `value`; `None` if it can, or if the type does not say.
fn type_refuses(ty: &str, value: &Bson) -> Option<String> {
    if matches!(value, Bson::Null) {
        return None;
    }
    let inner = ty
        .strip_prefix("Option<")
        .and_then(|inner| inner.strip_suffix('>'))
        .unwrap_or(ty)
        .trim_start_matches('&');
    let integer = match value {
        Bson::Int32(n) => Some(i128::from(*n)),
        Bson::Int64(n) => Some(i128::from(*n)),
        _ => None,
    };
    let range: Option<(i128, i128)> = match inner {
        "i8" => Some((i8::MIN.into(), i8::MAX.into())),
        "i16" => Some((i16::MIN.into(), i16::MAX.into())),
        "i32" => Some((i32::MIN.into(), i32::MAX.into())),
        "i64" | "isize" => Some((i64::MIN.into(), i64::MAX.into())),
        "u8" => Some((0, u8::MAX.into())),
        "u16" => Some((0, u16::MAX.into())),
        "u32" => Some((0, u32::MAX.into())),
        "u64" | "usize" => Some((0, u64::MAX.into())),
        _ => None,
    };
    let expected = match (inner, range) {
        (_, Some((min, max))) => match integer {
            Some(n) if (min..=max).contains(&n) => return None,
            Some(n) => return Some(format!("{n} does not fit it")),
            None => "an integer",
        },
        ("String" | "str", _) if matches!(value, Bson::String(_)) => return None,
        ("String" | "str", _) => "a string",
        ("bool", _) if matches!(value, Bson::Boolean(_)) => return None,
        ("bool", _) => "a boolean",
        ("ObjectId", _) if matches!(value, Bson::ObjectId(_)) => return None,
        ("ObjectId", _) => "an ObjectId",
        _ => return None,
    };
    Some(format!(
        "{value} is {}, never its value (give {expected})",
        shown_type(value)
    ))
}

/// `value`'s BSON type, in words.
fn shown_type(value: &Bson) -> &'static str {
    match value {
        Bson::String(_) => "a string",
        Bson::Int32(_) | Bson::Int64(_) => "an integer",
        Bson::Double(_) => "a double",
        Bson::Decimal128(_) => "a decimal",
        Bson::Boolean(_) => "a boolean",
        Bson::ObjectId(_) => "an ObjectId",
        Bson::Array(_) => "an array",
        Bson::Document(_) => "a document",
        _ => "of another BSON type",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::sequence::testing::on_field;

    const PER_PROJECT: Sequence = on_field(
        "ticket",
        "tickets",
        crate::schema::sequence::Strategy::Counters,
        "number",
        &["project", "year"],
    );

    fn scope(project: Bson, year: Option<Bson>) -> Result<Scope, Error> {
        let mut doc = doc! { "project": project };
        if let Some(year) = year {
            doc.insert("year", year);
        }
        Scope::of(&PER_PROJECT, &doc)
    }

    #[test]
    fn one_scope_has_one_spelling() {
        let wide = scope("a".into(), Some(Bson::Int64(2026))).unwrap();
        let narrow = scope("a".into(), Some(Bson::Int32(2026))).unwrap();
        assert_eq!(wide, narrow);
        let missing = scope("a".into(), None).unwrap();
        let null = scope("a".into(), Some(Bson::Null)).unwrap();
        assert_eq!(missing, null);
        assert_ne!(missing, wide);
        assert_eq!(
            Scope::given(
                &PER_PROJECT,
                Some(&Bson::Array(vec!["a".into(), 2026.into()]))
            )
            .unwrap(),
            wide
        );
    }

    #[test]
    fn no_two_scopes_share_a_counter() {
        // Values that a delimiter-joined key would confuse: "a|b" + "c" and "a" + "b|c".
        let one = scope("a|b".into(), Some("c".into())).unwrap();
        let two = scope("a".into(), Some("b|c".into())).unwrap();
        assert_ne!(one, two);
        assert_ne!(one.counter_id(&PER_PROJECT), two.counter_id(&PER_PROJECT));
        // A string and a number that print alike are two scopes.
        let text = scope("1".into(), None).unwrap();
        let number = scope(Bson::Int32(1), None).unwrap();
        assert_ne!(text, number);
        assert_eq!(
            text.counter_id(&PER_PROJECT),
            Bson::String(r#"["ticket","1",null]"#.into())
        );
        assert_eq!(
            number.counter_id(&PER_PROJECT),
            Bson::String(r#"["ticket",1,null]"#.into())
        );
        let quoted = scope(r#"a","b"#.into(), None).unwrap();
        assert_eq!(
            quoted.counter_id(&PER_PROJECT),
            Bson::String(r#"["ticket","a\",\"b",null]"#.into())
        );
        let id = mongodb::bson::oid::ObjectId::parse_str("65a1b2c3d4e5f60718293a4b").unwrap();
        let object_id = scope(Bson::ObjectId(id), Some(true.into())).unwrap();
        assert_eq!(
            object_id.counter_id(&PER_PROJECT),
            Bson::String(r#"["ticket",{"$oid":"65a1b2c3d4e5f60718293a4b"},true]"#.into())
        );
    }

    #[test]
    fn a_value_named_at_run_time_is_checked_against_the_fields_types() {
        const TYPED: Sequence = crate::schema::sequence::testing::typed(
            "invoice",
            "invoices",
            crate::schema::sequence::Strategy::Counters,
            "number",
            &["customer", "region", "year"],
            &["i32", "String", "Option<u16>"],
        );
        let named = |value: Bson| GivenScope::unchecked(value).resolve(&TYPED);
        assert!(named(mongodb::bson::bson!([8, "north", 2026])).is_ok());
        assert!(named(mongodb::bson::bson!([8_i64, null, null])).is_ok());
        let refused = |value: Bson, says: &str| {
            let error = named(value.clone()).unwrap_err();
            assert!(
                matches!(error.kind(), ErrorKind::InvalidScope { .. })
                    && error.to_string().contains(says),
                "{value}: {error}"
            );
        };
        refused(
            mongodb::bson::bson!(["8", "north", 2026]),
            "the scope field `customer` is i32: \"8\" is a string, never its value (give an integer)",
        );
        refused(
            mongodb::bson::bson!([5_000_000_000_i64, "north", 2026]),
            "the scope field `customer` is i32: 5000000000 does not fit it",
        );
        refused(
            mongodb::bson::bson!([8, 1, 2026]),
            "the scope field `region` is String: 1 is an integer, never its value (give a string)",
        );
        refused(
            mongodb::bson::bson!([8, "north", -1]),
            "the scope field `year` is Option<u16>: -1 does not fit it",
        );
        // A type seqid does not read takes any value: `on_field` says no type.
        assert!(GivenScope::unchecked("x").resolve(&PER_PROJECT).is_err());
        assert!(
            GivenScope::unchecked(mongodb::bson::bson!([1, 2]))
                .resolve(&PER_PROJECT)
                .is_ok()
        );
    }

    #[test]
    fn values_that_name_no_single_scope_are_refused() {
        for value in [
            Bson::Double(1.0),
            Bson::Array(vec![1.into()]),
            Bson::Document(doc! { "a": 1 }),
        ] {
            let error = scope(value.clone(), None).unwrap_err();
            assert!(
                matches!(error.kind(), ErrorKind::InvalidScope { .. })
                    && error.sequence().map(|seq| seq.name) == Some("ticket"),
                "{error:?}"
            );
            assert!(error.to_string().contains("project"), "{error}");
        }
        let error = Scope::given(&PER_PROJECT, Some(&"a".into())).unwrap_err();
        assert!(error.to_string().contains("tuple of 2 values"), "{error}");
        let error = Scope::given(&PER_PROJECT, None).unwrap_err();
        assert!(error.to_string().contains("`.scope(...)`"), "{error}");
    }
}
