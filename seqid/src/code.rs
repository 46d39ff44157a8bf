//! Display codes: a `String` field marked `#[seq_display("INV-{year}-{number:04}")]`,
//! written by the insert from the document's numbers and fields and stored with it, in
//! the same write.
//!
//! The derive checks the format (every placeholder a field; the sequence's number and
//! every scope field shown; the parts kept apart, so that a code reads back into the
//! values it shows) and writes [`Model::write_code`]; this module is what the insert does
//! with it. A code follows the primary's id: it is checked empty when the ids are
//! (`insert` fills both), written once every id is filled (again at each attempt of the
//! optimistic loop, whose number changes), kept with the ids when the outcome is unknown
//! (`resume_insert` writes the same code), and emptied with them when the document is
//! known not to be stored ([`crate::companions`]). A string that would make a code
//! ambiguous is refused before any id is taken.

use std::fmt::Write;

use crate::model::Model;
use crate::{Error, IdField, Sequence};

/// A field that holds a display code: where it is written, its format, and the sequence
/// whose numbers it shows. The derive makes one per `#[seq_display]`
/// ([`Model::DISPLAYS`]).
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A value a code cannot show: a string holding the character that ends it in the code,
/// which would let two documents' codes read alike. Returned by
/// [`Model::write_code`], and reported as [`Error::InvalidCode`].
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

/// `Ok` if every display field of `doc` is empty: `insert` writes the code with the id,
/// and refuses a document that carries one, as it refuses one with an id
/// ([`Error::IdAlreadySet`]).
pub(crate) fn ensure_unset<T: Model>(doc: &T) -> Result<(), Error> {
    for (index, display) in T::DISPLAYS.iter().enumerate() {
        let Some(code) = doc.display_field(index) else {
            continue;
        };
        if !code.is_empty() {
            return Err(Error::InvalidCode {
                sequence: display.sequence,
                display,
                value: format!("`{}` = {code:?}", display.field).into(),
                reason: "is set already: insert writes the code with the id, into an empty \
                         field; resume_insert finishes an insert whose outcome was unknown"
                    .into(),
            });
        }
    }
    Ok(())
}

/// `Ok` if every code of `doc` can be written, checked before any id is taken (by writing
/// it, where a value could be refused).
pub(crate) fn check<T: Model>(doc: &T) -> Result<(), Error> {
    let mut scratch = String::new();
    for (index, display) in T::DISPLAYS.iter().enumerate() {
        if display.checks_values {
            scratch.clear();
            written(doc, index, &mut scratch)?;
        }
    }
    Ok(())
}

/// Writes every code of `doc`, whose ids are filled, into its display field.
pub(crate) fn fill<T: Model>(doc: &mut T) -> Result<(), Error> {
    for index in 0..T::DISPLAYS.len() {
        let mut code = String::new();
        written(doc, index, &mut code)?;
        if let Some(field) = doc.display_field_mut(index) {
            *field = code;
        }
    }
    Ok(())
}

/// Empties every display field of `doc`, whose ids were unset.
pub(crate) fn clear<T: Model>(doc: &mut T) {
    for index in 0..T::DISPLAYS.len() {
        if let Some(field) = doc.display_field_mut(index) {
            field.clear();
        }
    }
}

/// The first code of `docs`, and the last when there are several, for the insert's span:
/// `None` if none was written.
pub(crate) fn shown<T: Model>(docs: &[T]) -> Option<String> {
    let code = |doc: &T| {
        doc.display_field(0)
            .filter(|code| !code.is_empty())
            .cloned()
    };
    let first = code(docs.first()?)?;
    match (docs.len(), docs.last().and_then(code)) {
        (1, _) | (_, None) => Some(first),
        (_, Some(last)) => Some(format!("{first} .. {last}")),
    }
}

/// The code `index` of `doc`, written into `out`; [`Error::InvalidCode`] if a value would
/// make it ambiguous.
fn written<T: Model>(doc: &T, index: usize, out: &mut String) -> Result<(), Error> {
    doc.write_code(index, out).map_err(|refused| {
        let display = &T::DISPLAYS[index];
        Error::InvalidCode {
            sequence: display.sequence,
            display,
            value: format!("`{}` = {:?}", refused.placeholder, refused.value).into(),
            reason: format!(
                "contains `{}`, the character that ends `{{{}}}` in the code, so that two \
                 documents' codes could read alike; nothing was reserved or written",
                refused.separator, refused.placeholder
            )
            .into(),
        }
    })
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
