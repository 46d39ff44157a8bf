//! What a display code is (`#[seq_display("INV-{year}-{number:04}")]`): the field that
//! holds it and its format ([`DisplayCode`]), a value it cannot show ([`Unshowable`]), and
//! the pieces the derive's [`Model::write_code`](crate::Model::write_code) writes it with:
//! literal text, numbers zero-padded and never cut, strings checked against the character
//! that ends them. What the insert does with codes is [`crate::fields::code`].

use std::fmt::Write;

use crate::schema::id::IdField;
use crate::schema::sequence::Sequence;

/// A field that holds a display code: where it is written, its format, and the sequence
/// whose numbers it shows. The derive makes one per `#[seq_display]`
/// ([`Model::DISPLAYS`](crate::Model::DISPLAYS)).
///
/// ```
/// use seqid::{Document, Model};
/// # use serde::Serialize;
///
/// #[derive(Serialize, Document)]
/// #[seq_id(collection = "invoices")]
/// struct Invoice {
///     year: i32,
///     #[seq_id("invoice", scope = "year")]
///     number: i64,
///     #[seq_display("INV-{year}-{number:04}")]
///     code: String,
/// }
///
/// let display = &Invoice::DISPLAYS[0];
/// assert_eq!((display.field, display.format), ("code", "INV-{year}-{number:04}"));
/// assert_eq!(display.sequence.name, "invoice");
/// assert!(!display.checks_values, "integers only: every value can be shown");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DisplayCode {
    /// The key the code is stored under, as serde writes it.
    pub field: &'static str,
    /// The format, as written in the attribute.
    pub format: &'static str,
    /// The sequence whose number the code shows (the first number in the format).
    pub sequence: &'static Sequence,
    /// Whether the format shows a string before more text, whose values are checked
    /// before any id is taken ([`Unshowable`]); `false`: every value can be shown, and
    /// there is nothing to check.
    pub checks_values: bool,
}

/// A display code by its field and format; its sequence is the error's own
/// ([`ErrorKind::InvalidCode`](crate::error::ErrorKind::InvalidCode)) or
/// [`sequence`](DisplayCode::sequence)'s, not repeated.
impl std::fmt::Debug for DisplayCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DisplayCode")
            .field("field", &self.field)
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

/// A value a code cannot show: a string holding the character that ends it in the code,
/// which would let two documents' codes read alike. Returned by
/// [`Model::write_code`](crate::Model::write_code), and reported as
/// [`ErrorKind::InvalidCode`](crate::error::ErrorKind::InvalidCode).
///
/// ```
/// use seqid::{Document, Model};
/// # use serde::Serialize;
/// # #[derive(Serialize, Document)]
/// # #[seq_id(collection = "orders")]
/// # struct Order {
/// #     shop: String,
/// #     #[seq_id("order", scope = "shop")]
/// #     number: i64,
/// #     #[seq_display("{shop}-{number}")]
/// #     code: String,
/// # }
/// let order = Order { shop: "north-east".into(), number: 0, code: String::new() };
/// let refused = order.write_code(0, &mut String::new()).unwrap_err();
/// assert_eq!((refused.placeholder, refused.separator), ("shop", '-'));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unshowable {
    /// The placeholder's field, by its Rust name.
    pub placeholder: &'static str,
    /// The value.
    pub value: String,
    /// The character that ends the placeholder in the code, which the value contains.
    pub separator: char,
}

/// For the derive: a [`DisplayCode`].
#[doc(hidden)]
pub const fn display_code(
    field: &'static str,
    format: &'static str,
    sequence: &'static Sequence,
    checks_values: bool,
) -> DisplayCode {
    DisplayCode {
        field,
        format,
        sequence,
        checks_values,
    }
}

/// For the derive: literal text of a format.
#[doc(hidden)]
pub fn literal(out: &mut String, text: &str) {
    out.push_str(text);
}

/// For the derive: a sequence's number, zero-padded to `width` digits (`0`: none), never
/// cut. An unset number writes nothing (the code is checked before it is filled).
#[doc(hidden)]
pub fn number<F: IdField>(out: &mut String, field: &F, width: usize) {
    if let Some(value) = field.get() {
        let value: i128 = value.into();
        let _ = write!(out, "{value:0width$}");
    }
}

/// The integer types a code shows as they are written.
#[doc(hidden)]
pub trait Integer: std::fmt::Display {}

macro_rules! integers {
    ($($ty:ty)*) => { $(impl Integer for $ty {})* };
}
integers!(i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize);

/// For the derive: an integer field, zero-padded to `width` digits (`0`: none), never cut.
#[doc(hidden)]
pub fn integer<I: Integer>(out: &mut String, value: &I, width: usize) {
    let _ = write!(out, "{value:0width$}");
}

/// For the derive: a string field, refused if it contains `separator`, the character
/// that ends it in the code (`None`: it ends the code, and may hold anything).
#[doc(hidden)]
pub fn text(
    out: &mut String,
    value: &str,
    placeholder: &'static str,
    separator: Option<char>,
) -> Result<(), Unshowable> {
    if let Some(separator) = separator
        && value.contains(separator)
    {
        return Err(Unshowable {
            placeholder,
            value: value.to_owned(),
            separator,
        });
    }
    out.push_str(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_padded_to_their_width_and_never_cut() {
        let mut out = String::new();
        number(&mut out, &42_i64, 4);
        out.push('/');
        number(&mut out, &123_456_i64, 4);
        out.push('/');
        integer(&mut out, &-7_i32, 3);
        out.push('/');
        number(&mut out, &Some(9_u32), 0);
        out.push('/');
        number(&mut out, &None::<i64>, 4);
        assert_eq!(out, "0042/123456/-07/9/");
    }

    #[test]
    fn a_string_holding_its_separator_is_refused() {
        let mut out = String::new();
        text(&mut out, "north", "shop", Some('-')).unwrap();
        text(&mut out, "a-b", "tail", None).unwrap();
        assert_eq!(out, "northa-b");
        let refused = text(&mut out, "north-east", "shop", Some('-')).unwrap_err();
        assert_eq!(
            refused,
            Unshowable {
                placeholder: "shop",
                value: "north-east".into(),
                separator: '-'
            }
        );
    }
}
