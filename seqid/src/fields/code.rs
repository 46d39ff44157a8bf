//! Display codes in the insert: a `String` field marked
//! `#[seq_display("INV-{year}-{number:04}")]`, written from the document's numbers and
//! fields and stored with it, in the same write.
//!
//! The derive checks the format (every placeholder a field; the sequence's number and
//! every scope field shown; the parts kept apart, so that a code reads back into the
//! values it shows) and writes [`Model::write_code`] from the pieces of [`crate::schema::display`];
//! this module is what the insert does with it. A code follows the primary's id: it is
//! checked empty when the ids are (`insert` fills both), written once every id is filled
//! (again at each attempt of the optimistic loop, whose number changes), kept with the ids
//! when the outcome is unknown (`resume_insert` writes the same code), and emptied with
//! them when the document is known not to be stored ([`crate::fields::companions`]). A string that
//! would make a code ambiguous is refused before any id is taken.

use crate::base::error::{Error, ErrorKind};
use crate::schema::model::Model;

/// `Ok` if every display field of `doc` is empty: `insert` writes the code with the id,
/// and refuses a document that carries one, as it refuses one with an id
/// ([`ErrorKind::IdAlreadySet`]).
pub(crate) fn ensure_unset<T: Model>(doc: &T) -> Result<(), Error> {
    ensure_empty(
        doc,
        "is set already: insert writes the code with the id, into an empty field; \
         resume_insert finishes an insert whose outcome was unknown",
    )
}

/// `Ok` if every display field of `doc`, which is to take an id reserved before, is empty
/// or holds the code its ids write as they are (what
/// [`Reserved::fill`](crate::Reserved::fill) wrote): the insert writes it again.
pub(crate) fn ensure_unset_or_written<T: Model>(doc: &T) -> Result<(), Error> {
    for (index, display) in T::DISPLAYS.iter().enumerate() {
        let Some(code) = doc.display_field(index).filter(|code| !code.is_empty()) else {
            continue;
        };
        let mut now = String::new();
        written(doc, index, &mut now)?;
        if *code != now {
            return Err(Error::new(
                display.sequence,
                ErrorKind::InvalidCode {
                    display,
                    value: format!("`{}` = {code:?}", display.field).into(),
                    reason: format!(
                        "is set already, and is not the code the reserved id writes ({now:?}): \
                     insert writes the code with the id, into an empty field; nothing was \
                     written"
                    )
                    .into(),
                },
            ));
        }
    }
    Ok(())
}

/// `Ok` if every display field of the stored draft `doc`, still unnumbered, is empty:
/// `number_draft` writes the code with the number, and never replaces what the caller
/// stored.
pub(crate) fn ensure_unset_in_draft<T: Model>(doc: &T) -> Result<(), Error> {
    ensure_empty(
        doc,
        "is stored in the draft already, which has no number yet: number_draft writes the \
         code with the number and never replaces a stored one (store drafts with the field \
         empty); nothing was reserved or written",
    )
}

fn ensure_empty<T: Model>(doc: &T, reason: &'static str) -> Result<(), Error> {
    for (index, display) in T::DISPLAYS.iter().enumerate() {
        let Some(code) = doc.display_field(index) else {
            continue;
        };
        if !code.is_empty() {
            return Err(Error::new(
                display.sequence,
                ErrorKind::InvalidCode {
                    display,
                    value: format!("`{}` = {code:?}", display.field).into(),
                    reason: reason.into(),
                },
            ));
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
    let code = |doc: &T| doc.display_field(0).filter(|c| !c.is_empty()).cloned();
    let first = code(docs.first()?)?;
    match (docs.len(), docs.last().and_then(code)) {
        (1, _) | (_, None) => Some(first),
        (_, Some(last)) => Some(format!("{first} .. {last}")),
    }
}

/// The code `index` of `doc`, written into `out`; [`ErrorKind::InvalidCode`] if a value would
/// make it ambiguous.
fn written<T: Model>(doc: &T, index: usize, out: &mut String) -> Result<(), Error> {
    doc.write_code(index, out).map_err(|refused| {
        let display = &T::DISPLAYS[index];
        Error::new(
            display.sequence,
            ErrorKind::InvalidCode {
                display,
                value: format!("`{}` = {:?}", refused.placeholder, refused.value).into(),
                reason: format!(
                    "contains `{}`, the character that ends `{{{}}}` in the code, so that two \
                 documents' codes could read alike; nothing was reserved or written",
                    refused.separator, refused.placeholder
                )
                .into(),
            },
        )
    })
}
