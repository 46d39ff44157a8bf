//! The scope a call names, checked at compile time: `.scope(...)` on a find by number and on
//! the counter's operations takes a value of the scope field's type (for several scope
//! fields, a tuple of values in the declared order), so that a value no document can hold
//! (`"8"` for an integer `customer`) is a compile error at the call, not a find that finds
//! nothing.
//!
//! `#[derive(Document)]` writes each sequence's scope as a type: `Fields` of the scope
//! fields' types, `Unscoped` for a sequence without a scope (which takes no `.scope(...)`
//! at all), or `Unchecked` where the field's Rust type does not say what is stored (a
//! field serialized by `serialize_with` or `with`). A value names a scope through
//! [`Names`], each of its parts through [`Value`]:
//!
//! - a value of the field's own type, or a reference to one;
//! - a `&str` for a `String` field;
//! - for an `Option<F>` field, an `Option<F>` (`None` names the documents without a value)
//!   or a value for `F`;
//! - any integer type for an integer field, checked when the call runs to fit the field's
//!   type ([`ErrorKind::InvalidScope`](crate::error::ErrorKind::InvalidScope) names the type otherwise), so
//!   that `.scope(2026)` is written without a suffix whatever the field's width;
//! - [`Null`] for any field: the documents whose field is null or missing.
//!
//! ```
//! use seqid::Document;
//! use seqid::scoped::{Fields, Names};
//!
//! #[derive(serde::Serialize, Document)]
//! #[seq_id(collection = "invoices")]
//! struct Invoice {
//!     tenant: String,
//!     year: i32,
//!     #[seq_id("invoice", scope = ["tenant", "year"])]
//!     number: i64,
//! }
//!
//! fn names<S>(_: impl Names<S>) {}
//! names::<<Invoice as seqid::Model>::Scope>(("acme", 2026));
//! names::<Fields<(String, i32)>>((String::from("acme"), 2026_i64));
//! ```
//!
//! and a value of the wrong type does not compile:
//!
//! ```compile_fail
//! # use seqid::Document;
//! # #[derive(serde::Serialize, Document)]
//! # #[seq_id(collection = "invoices")]
//! # struct Invoice { customer: i32, #[seq_id("invoice", scope = "customer")] number: i64 }
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! let last = Invoice::sequence().last_reserved(&db).scope("8").await?; // `customer` is an i32
//! # Ok(()) }
//! ```

use std::marker::PhantomData;

use mongodb::bson::Bson;
use serde::Serialize;

/// The scope of a sequence scoped by fields of the types `T`, a tuple in the declared
/// order: `Fields<(String,)>` for `scope = "project"` on a `String` field,
/// `Fields<(String, i32)>` for `scope = ["tenant", "year"]`. A type, never a value.
///
/// ```
/// use seqid::scoped::{Fields, Names};
///
/// fn names<S>(_: impl Names<S>) {}
/// names::<Fields<(String,)>>("apollo");
/// names::<Fields<(String, i32)>>(("acme", 2026));
/// ```
#[doc(hidden)]
pub struct Fields<T>(PhantomData<fn() -> T>, Never);

/// The scope of a sequence declared without `scope`: no value names it, so that a call
/// given `.scope(...)` on it does not compile.
///
/// ```compile_fail
/// use seqid::scoped::{Names, Unscoped};
///
/// fn names<S>(_: impl Names<S>) {}
/// names::<Unscoped>("apollo");
/// ```
#[doc(hidden)]
pub enum Unscoped {}

/// The scope of a sequence whose scope fields do not say by their Rust type what is
/// stored (serialized by `serialize_with` or `with`): any serializable value names it,
/// and the call checks what it can when it runs (the number of values, and that each is
/// a string, an integer, an ObjectId, a boolean or null).
///
/// ```
/// use seqid::scoped::{Names, Unchecked};
///
/// fn names<S>(_: impl Names<S>) {}
/// names::<Unchecked>("2026-01");
/// ```
#[doc(hidden)]
pub enum Unchecked {}

/// The scope of the documents whose scope field is null or missing (stored by other
/// means, or an `Option` field left `None`), whatever the field's type: a value for every
/// scope field. MongoDB's equality and its indexes treat a missing field as null, and so
/// does seqid: they share one counter.
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id(collection = "tickets")]
/// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
/// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
/// // Tickets imported without a project.
/// let last = Ticket::sequence().last_reserved(&db).scope(seqid::scoped::Null).await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Null;

// Not `Serialize`: so that it is no value of its own type, and stands for every type.
impl<F> Value<F> for Null {
    fn scope_value(&self) -> Result<Bson, String> {
        Ok(Bson::Null)
    }
}

/// Keeps [`Fields`] from being made: it is a type only.
enum Never {}

/// A value that names a scope of the kind `S` (see the [module](self)): what `.scope(...)`
/// takes.
///
/// ```
/// use seqid::scoped::{Fields, Names};
///
/// assert_eq!(
///     <(&str, i32) as Names<Fields<(String, i64)>>>::scope_values(&("acme", 2026)),
///     Ok(mongodb::bson::bson!(["acme", 2026_i64])),
/// );
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not name a scope of this sequence, whose scope is `{S}`",
    label = "not a value of the sequence's scope",
    note = "a scoped sequence takes a value of its scope field's type (a `&str` for a `String`, any integer for an integer field), or for several scope fields a tuple of such values in the declared order; a sequence without a scope (`Unscoped`) takes no `.scope(...)`"
)]
pub trait Names<S> {
    /// The scope as seqid reads it: the one value, or an array of the values in the
    /// declared order; `Err` with why a value cannot be the field's.
    fn scope_values(&self) -> Result<Bson, String>;
}

/// A value of a scope field of the type `F`: of the type itself, or one that stands for
/// it (see the [module](self)).
///
/// ```
/// use seqid::scoped::Value;
///
/// assert_eq!(<&str as Value<String>>::scope_value(&"apollo"), Ok("apollo".into()));
/// assert_eq!(<i64 as Value<i32>>::scope_value(&2026), Ok(mongodb::bson::Bson::Int32(2026)));
/// assert!(<i64 as Value<i32>>::scope_value(&5_000_000_000).unwrap_err().contains("i32"));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value of the scope field's type `{F}`",
    label = "the scope field is `{F}`",
    note = "give a value of the field's type (a `&str` for a `String`, any integer for an integer field)"
)]
pub trait Value<F> {
    /// The value as a document stores it: as the field's type serializes it.
    fn scope_value(&self) -> Result<Bson, String>;
}

/// `value` as serde and bson write it.
fn serialized(value: &impl Serialize) -> Result<Bson, String> {
    mongodb::bson::to_bson(value)
        .map_err(|error| format!("the scope could not be serialized: {error}"))
}

impl<F: Serialize> Value<F> for F {
    fn scope_value(&self) -> Result<Bson, String> {
        serialized(self)
    }
}

impl<F: Serialize> Value<F> for &F {
    fn scope_value(&self) -> Result<Bson, String> {
        serialized(*self)
    }
}

impl Value<String> for &str {
    fn scope_value(&self) -> Result<Bson, String> {
        Ok(Bson::String((*self).to_owned()))
    }
}

impl<F: Serialize> Value<Option<F>> for F {
    fn scope_value(&self) -> Result<Bson, String> {
        serialized(self)
    }
}

impl Value<Option<String>> for &str {
    fn scope_value(&self) -> Result<Bson, String> {
        Ok(Bson::String((*self).to_owned()))
    }
}

/// An integer of one type for an integer field of another: converted to the field's type
/// (and so written as the field's value would be), or refused naming it.
macro_rules! integers {
    ($($from:ty => [$($to:ty),*];)*) => {$($(
        impl Value<$to> for $from {
            fn scope_value(&self) -> Result<Bson, String> {
                match <$to>::try_from(*self) {
                    Ok(value) => serialized(&value),
                    Err(_) => Err(format!(
                        "{} does not fit the scope field's type {}",
                        self,
                        stringify!($to)
                    )),
                }
            }
        }
    )*)*};
}

integers! {
    i8 => [i16, i32, i64, isize, u8, u16, u32, u64, usize];
    i16 => [i8, i32, i64, isize, u8, u16, u32, u64, usize];
    i32 => [i8, i16, i64, isize, u8, u16, u32, u64, usize];
    i64 => [i8, i16, i32, isize, u8, u16, u32, u64, usize];
    isize => [i8, i16, i32, i64, u8, u16, u32, u64, usize];
    u8 => [i8, i16, i32, i64, isize, u16, u32, u64, usize];
    u16 => [i8, i16, i32, i64, isize, u8, u32, u64, usize];
    u32 => [i8, i16, i32, i64, isize, u8, u16, u64, usize];
    u64 => [i8, i16, i32, i64, isize, u8, u16, u32, usize];
    usize => [i8, i16, i32, i64, isize, u8, u16, u32, u64];
}

impl<X: Serialize> Names<Unchecked> for X {
    fn scope_values(&self) -> Result<Bson, String> {
        serialized(self)
    }
}

impl<A, X: Value<A>> Names<Fields<(A,)>> for X {
    fn scope_values(&self) -> Result<Bson, String> {
        self.scope_value()
    }
}

/// A tuple of values for the scope fields, in the declared order: an array of them.
macro_rules! tuples {
    ($(($($field:ident $value:ident $at:tt),*);)*) => {$(
        impl<$($field,)* $($value: Value<$field>,)*> Names<Fields<($($field,)*)>> for ($($value,)*) {
            fn scope_values(&self) -> Result<Bson, String> {
                Ok(Bson::Array(vec![$(self.$at.scope_value()?,)*]))
            }
        }
    )*};
}

tuples! {
    (A X 0, B Y 1);
    (A X 0, B Y 1, C Z 2);
    (A X 0, B Y 1, C Z 2, D W 3);
    (A X 0, B Y 1, C Z 2, D W 3, E V 4);
    (A X 0, B Y 1, C Z 2, D W 3, E V 4, F U 5);
}

/// The most scope fields [`Fields`] spells; a sequence scoped by more is [`Unchecked`].
#[doc(hidden)]
pub const MAX_FIELDS: usize = 6;
