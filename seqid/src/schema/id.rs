//! The Rust types an id field may have, and the checked conversions into them.

/// A type that can hold a sequence id: `i32`, `i64`, `u32`, `u64`, an `Option` of one, or
/// a newtype over one of those ([`newtype_id!`](crate::newtype_id)).
///
/// A value is *unset* when it is `None` or zero; [`Document::insert`](crate::Document::insert)
/// fills only unset ids. Conversions are checked: a counter value the type cannot hold
/// becomes [`ErrorKind::Overflow`](crate::error::ErrorKind::Overflow), never a wrapped number.
///
/// ```
/// use seqid::IdField;
///
/// assert_eq!(<i32 as IdField>::from_seq(7), Some(7));
/// assert_eq!(<i32 as IdField>::from_seq(i64::from(i32::MAX) + 1), None);
/// assert_eq!(<Option<u32> as IdField>::from_seq(-1), None);
/// assert!(<Option<i64> as IdField>::is_unset(&None));
/// assert_eq!(Some(5_i64).get(), Some(5));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a sequence id",
    label = "the field a sequence fills must be `i32`, `i64`, `u32`, `u64`, or an `Option` of one",
    note = "seqid stores integer ids; a newtype over one becomes an id type with `seqid::newtype_id!(Name(i64));`"
)]
pub trait IdField: Send + Sync + Sized {
    /// The integer inside: `i64` for both `i64` and `Option<i64>`.
    type Value: Copy + Into<i128> + std::fmt::Debug + std::fmt::Display + Send + Sync + 'static;

    /// The Rust name of [`Self::Value`], for error messages.
    const TYPE_NAME: &'static str;

    /// "the id field's type `TYPE_NAME`", for error messages.
    const FIELD_TYPE: &'static str;

    /// How an unset value of this type is written, for error messages: `0` or `None`.
    const UNSET: &'static str = "0";

    /// Converts a sequence value, or `None` if this type cannot hold it.
    fn from_seq(seq: i64) -> Option<Self>;

    /// The integer held, or `None` when unset.
    fn get(&self) -> Option<Self::Value>;

    /// Whether the field still waits for an id (`None` or zero).
    fn is_unset(&self) -> bool {
        self.get().is_none()
    }

    /// The unset value (`None` or zero), restored when an insert fails.
    fn unset() -> Self;
}

macro_rules! integer_id {
    ($($t:ty),*) => {$(
        impl IdField for $t {
            type Value = $t;
            const TYPE_NAME: &'static str = stringify!($t);
            const FIELD_TYPE: &'static str = concat!("the id field's type ", stringify!($t));

            fn from_seq(seq: i64) -> Option<Self> {
                <$t>::try_from(seq).ok()
            }

            fn get(&self) -> Option<$t> {
                (*self != 0).then_some(*self)
            }

            fn unset() -> Self {
                0
            }
        }

        impl IdField for Option<$t> {
            type Value = $t;
            const TYPE_NAME: &'static str = stringify!($t);
            const FIELD_TYPE: &'static str =
                concat!("the id field's type Option<", stringify!($t), ">");
            const UNSET: &'static str = "None";

            fn from_seq(seq: i64) -> Option<Self> {
                <$t>::try_from(seq).ok().map(Some)
            }

            fn get(&self) -> Option<$t> {
                *self
            }

            fn unset() -> Self {
                None
            }
        }
    )*};
}

integer_id!(i32, i64, u32, u64);

/// Makes a newtype over an id type an [`IdField`], so that it can be the id field of a
/// [`Document`](crate::Document): the one line of opt-in a newtype needs. serde writes a
/// newtype struct as the value inside (with or without `#[serde(transparent)]`), so the
/// document holds a plain integer.
///
/// ```
/// use seqid::{Document, IdField};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
/// #[serde(transparent)]
/// struct TicketNo(i64);
///
/// seqid::newtype_id!(TicketNo(i64));
///
/// #[derive(Serialize, Document)]
/// #[seq_id("ticket", collection = "tickets")]
/// struct Ticket {
///     #[serde(rename = "_id")]
///     number: TicketNo,
///     title: String,
/// }
///
/// assert_eq!(TicketNo::from_seq(7), Some(TicketNo(7)));
/// assert!(TicketNo(0).is_unset());
/// assert_eq!(TicketNo(7).get(), Some(7_i64));
/// ```
#[macro_export]
macro_rules! newtype_id {
    ($name:ident($inner:ty)) => {
        impl $crate::IdField for $name {
            type Value = <$inner as $crate::IdField>::Value;
            const TYPE_NAME: &'static str = <$inner as $crate::IdField>::TYPE_NAME;
            const FIELD_TYPE: &'static str = concat!(
                "the id field's type ",
                stringify!($name),
                " (",
                stringify!($inner),
                ")"
            );
            const UNSET: &'static str = concat!("a ", stringify!($name), " holding 0 (or None)");

            fn from_seq(seq: i64) -> ::core::option::Option<Self> {
                <$inner as $crate::IdField>::from_seq(seq).map($name)
            }

            fn get(&self) -> ::core::option::Option<Self::Value> {
                <$inner as $crate::IdField>::get(&self.0)
            }

            fn unset() -> Self {
                $name(<$inner as $crate::IdField>::unset())
            }
        }
    };
}

/// An id field seen through a reference, whatever its type: how the runtime reads and
/// fills the fields of a document's other sequences ([`Model::other_id`](crate::Model::other_id)),
/// whose types differ from one field to the next. Implemented for every [`IdField`].
///
/// ```
/// use seqid::__private::AnyIdField;
///
/// let mut number: Option<u32> = None;
/// let field: &mut dyn AnyIdField = &mut number;
/// assert_eq!(field.value(), None);
/// assert!(field.fill(42));
/// assert_eq!(field.value(), Some(42));
/// assert!(!field.fill(-1), "a u32 cannot hold -1");
/// field.unset();
/// assert_eq!(number, None);
/// ```
pub trait AnyIdField: Send + Sync {
    /// The id, widened, or `None` when unset.
    fn value(&self) -> Option<i128>;

    /// Stores `id`; `false`, and nothing stored, when the field's type cannot hold it.
    fn fill(&mut self, id: i64) -> bool;

    /// Sets the field back to unset (`0` or `None`).
    fn unset(&mut self);

    /// [`IdField::FIELD_TYPE`], for error messages.
    fn field_type(&self) -> &'static str;

    /// [`IdField::UNSET`], for error messages.
    fn unset_value(&self) -> &'static str;

    /// [`IdField::TYPE_NAME`], for error messages.
    fn type_name(&self) -> &'static str;
}

impl<F: IdField> AnyIdField for F {
    fn value(&self) -> Option<i128> {
        self.get().map(Into::into)
    }

    fn fill(&mut self, id: i64) -> bool {
        F::from_seq(id).map(|field| *self = field).is_some()
    }

    fn unset(&mut self) {
        *self = F::unset();
    }

    fn field_type(&self) -> &'static str {
        F::FIELD_TYPE
    }

    fn unset_value(&self) -> &'static str {
        F::UNSET
    }

    fn type_name(&self) -> &'static str {
        F::TYPE_NAME
    }
}
