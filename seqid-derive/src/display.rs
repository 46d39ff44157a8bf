//! `#[seq_display("...")]`: the format of a display code, parsed, and checked to give every
//! document a code of its own; and the fields that hold codes, resolved against the
//! struct's sequences.
//!
//! A code is read back into its parts only if the format keeps them apart. The rules, each
//! a compile error naming the placeholder:
//!
//! - every placeholder names a field that shows as a plain integer or string;
//! - the format shows a sequence's number and every scope field of that sequence: two
//!   documents share a code only if they share that number in that scope, which the
//!   sequence never allows;
//! - two placeholders are never next to each other: `{a}{b}` writes `1`+`23` and `12`+`3`
//!   alike, and a width does not help, since a number wider than its width is written
//!   whole;
//! - a number is never followed by a literal that starts with a digit (`{n}0`);
//! - a string is followed by the end of the format or by a literal: the literal's first
//!   character is the string's separator, and a value that contains it is refused at run
//!   time, before any id is taken.

use std::ops::Range;

use proc_macro2::Span;
use syn::LitStr;
use syn::ext::IdentExt;

use crate::ast::{Container, Field};
use crate::closest;
use crate::ctxt::Ctxt;
use crate::declaration::Declaration;
use crate::types::{is_integer, is_string};

/// One part of a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text written as it is (`{{` and `}}` already unescaped).
    Literal(String),
    /// `{name}` or `{name:0N}`: a field's value, zero-padded to `width` digits if given.
    Field {
        name: String,
        width: Option<usize>,
        /// Where the placeholder is in the format, for messages.
        at: Range<usize>,
    },
}

/// A mistake in a format, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub message: String,
    pub at: Range<usize>,
}

fn error(message: impl Into<String>, at: Range<usize>) -> FormatError {
    FormatError {
        message: message.into(),
        at,
    }
}

/// Splits `format` into its parts.
pub fn parse(format: &str) -> Result<Vec<Part>, FormatError> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = format.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '{' if chars.next_if(|&(_, c)| c == '{').is_some() => literal.push('{'),
            '}' if chars.next_if(|&(_, c)| c == '}').is_some() => literal.push('}'),
            '}' => {
                return Err(error(
                    "a `}` that closes no placeholder: write `}}` for the character",
                    at..at + 1,
                ));
            }
            '{' => {
                let Some(end) = format[at..].find('}').map(|end| at + end) else {
                    return Err(error(
                        "a `{` that opens no placeholder: write `{{` for the character, or \
                         close the placeholder with `}`",
                        at..format.len(),
                    ));
                };
                while chars.next_if(|&(i, _)| i <= end).is_some() {}
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                parts.push(placeholder(&format[at + 1..end], at..end + 1)?);
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    Ok(parts)
}

/// The placeholder `inner` (between the braces), at `at`.
fn placeholder(inner: &str, at: Range<usize>) -> Result<Part, FormatError> {
    let (name, spec) = match inner.split_once(':') {
        Some((name, spec)) => (name, Some(spec)),
        None => (inner, None),
    };
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_alphanumeric()) {
        return Err(error(
            format!("`{{{inner}}}`: a placeholder names a field of the struct, `{{field}}`"),
            at,
        ));
    }
    let width = match spec {
        None => None,
        Some(spec) => match spec.strip_prefix('0').map(str::parse::<usize>) {
            Some(Ok(width)) if width > 0 => Some(width),
            _ => {
                return Err(error(
                    format!(
                        "`{{{inner}}}`: the only format a placeholder takes is a zero-padded \
                         width, `{{{name}:0N}}` (`{{{name}:06}}` writes 42 as 000042)"
                    ),
                    at,
                ));
            }
        },
    };
    Ok(Part::Field {
        name: name.to_owned(),
        width,
        at,
    })
}

/// What a field shows as, for the checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// The number of a sequence, with the names of its scope fields.
    Number,
    /// Another integer field.
    Integer,
    /// A string field.
    Text,
}

/// A format that passed the checks: its parts, the field of the sequence whose codes it
/// writes, and the separator of each string placeholder followed by a literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub parts: Vec<Part>,
    pub sequence: String,
    pub separators: Vec<(String, char)>,
}

/// Checks `parts` against the struct: `shown` tells what a field shows as, or why it
/// cannot be shown, and `scope_of` gives the scope fields of a sequence field.
pub fn check(
    parts: Vec<Part>,
    shown: impl Fn(&str) -> Result<Shown, String>,
    scope_of: impl Fn(&str) -> Vec<String>,
) -> Result<Checked, FormatError> {
    let mut sequence = None;
    let mut separators = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        let Part::Field { name, at, .. } = part else {
            continue;
        };
        let kind = shown(name).map_err(|why| error(why, at.clone()))?;
        if let (Shown::Text, Part::Field { width: Some(_), .. }) = (kind, part) {
            return Err(error(
                format!(
                    "`{{{name}:0N}}`: a width pads a number with zeros; `{name}` is a string, \
                     shown as it is: write `{{{name}}}`"
                ),
                at.clone(),
            ));
        }
        if kind == Shown::Number && sequence.is_none() {
            sequence = Some(name.clone());
        }
        match (kind, parts.get(index + 1)) {
            (_, Some(Part::Field { name: next, .. })) => {
                return Err(error(
                    format!(
                        "`{{{name}}}{{{next}}}` cannot be read back: two placeholders side by \
                         side write `1`+`23` and `12`+`3` alike (a width does not help: a \
                         number wider than it is written whole); put a separator between them"
                    ),
                    at.clone(),
                ));
            }
            (Shown::Number | Shown::Integer, Some(Part::Literal(next)))
                if next.starts_with(|c: char| c.is_ascii_digit()) =>
            {
                return Err(error(
                    format!(
                        "`{{{name}}}` is followed by a digit, `{next}`: the number's end \
                         could not be told from the text; start the text after it with \
                         something else than a digit"
                    ),
                    at.clone(),
                ));
            }
            (Shown::Text, Some(Part::Literal(next))) => {
                let separator = next.chars().next().expect("literals are not empty");
                separators.push((name.clone(), separator));
            }
            _ => {}
        }
    }
    let Some(sequence) = sequence else {
        return Err(error(
            "the format shows no sequence number: a code is one document's only if it shows \
             its sequence's number (and every scope field of that sequence)",
            0..0,
        ));
    };
    let shows = |field: &str| {
        parts
            .iter()
            .any(|part| matches!(part, Part::Field { name, .. } if name == field))
    };
    if let Some(missing) = scope_of(&sequence).into_iter().find(|field| !shows(field)) {
        return Err(error(
            format!(
                "the format shows `{{{sequence}}}` but not its scope field `{missing}`: \
                 numbers repeat from one `{missing}` to the next, and so would the codes; \
                 add `{{{missing}}}`"
            ),
            0..0,
        ));
    }
    Ok(Checked {
        parts,
        sequence,
        separators,
    })
}

/// A field that holds a display code, checked.
pub struct Display<'c> {
    pub field: &'c Field<'c>,
    pub format: &'c LitStr,
    /// The format's parts, each placeholder resolved to its field.
    pub pieces: Vec<Piece<'c>>,
    /// The index, in the declaration's sequences, of the sequence whose codes these are.
    pub sequence: usize,
}

/// A part of a checked format, as the code is written.
pub enum Piece<'c> {
    Literal(String),
    /// A sequence's number, zero-padded to `width` digits (`0`: none).
    Number {
        field: &'c Field<'c>,
        width: usize,
    },
    /// Another integer field.
    Integer {
        field: &'c Field<'c>,
        width: usize,
    },
    /// A string field, ended by `separator` when text follows it.
    Text {
        field: &'c Field<'c>,
        separator: Option<char>,
    },
}

impl Display<'_> {
    /// Whether some values cannot be shown: a string followed by text.
    pub fn checks_values(&self) -> bool {
        self.pieces.iter().any(|piece| {
            matches!(
                piece,
                Piece::Text {
                    separator: Some(_),
                    ..
                }
            )
        })
    }
}

/// Every field marked `#[seq_display]`, each checked; a field or a format that breaks a
/// rule is reported to `cx` and left out.
pub fn resolve<'c>(cx: &Ctxt, cont: &'c Container<'c>, decl: &Declaration<'c>) -> Vec<Display<'c>> {
    let mut displays: Vec<Display> = Vec::new();
    for field in cont.fields() {
        let Some(attr) = &field.display else { continue };
        if !holds_a_code(cx, decl, field, &attr.attr) {
            continue;
        }
        let Some(format) = &attr.format else { continue };
        let checked = parse(&format.value()).and_then(|parts| {
            check(
                parts,
                |name| shown(cont, decl, name),
                |name| scope_of(decl, name),
            )
        });
        let checked = match checked {
            Ok(checked) => checked,
            Err(refused) => {
                cx.syn_error(syn::Error::new(
                    span_within(format, refused.at),
                    format!("{}: {}", format_name(format), refused.message),
                ));
                continue;
            }
        };
        let Some(sequence) = decl.sequences.iter().position(|declared| {
            declared
                .field
                .is_some_and(|f| f.ident.unraw() == checked.sequence.as_str())
        }) else {
            continue;
        };
        if let Some(first) = displays.iter().find(|display| display.sequence == sequence) {
            cx.error_spanned_by(
                format,
                format!(
                    "`{}` holds the codes of `{}` already: one display field per sequence, so \
                     that `find_by_...` and the unique index each name one code",
                    first.field.ident.unraw(),
                    checked.sequence,
                ),
            );
            continue;
        }
        let pieces = checked
            .parts
            .into_iter()
            .filter_map(|part| piece(cont, decl, part, &checked.separators))
            .collect();
        displays.push(Display {
            field,
            format,
            pieces,
            sequence,
        });
    }
    displays
}

/// A checked part, its placeholder resolved to its field.
fn piece<'c>(
    cont: &'c Container<'c>,
    decl: &Declaration,
    part: Part,
    separators: &[(String, char)],
) -> Option<Piece<'c>> {
    let (name, width) = match part {
        Part::Literal(text) => return Some(Piece::Literal(text)),
        Part::Field { name, width, .. } => (name, width.unwrap_or(0)),
    };
    let field = field_named(cont, &name)?;
    Some(match shown(cont, decl, &name).ok()? {
        Shown::Number => Piece::Number { field, width },
        Shown::Integer => Piece::Integer { field, width },
        Shown::Text => Piece::Text {
            field,
            separator: separators
                .iter()
                .find(|(text, _)| *text == name)
                .map(|&(_, separator)| separator),
        },
    })
}

/// The field whose Rust name is `name`.
fn field_named<'c>(cont: &'c Container<'c>, name: &str) -> Option<&'c Field<'c>> {
    cont.fields()
        .iter()
        .find(|field| field.ident.unraw() == name)
}

/// Whether `field` can hold a code: a `String`, written by serde as itself, filled by no
/// sequence. Each reason it cannot is reported.
fn holds_a_code(cx: &Ctxt, decl: &Declaration, field: &Field, attr: &syn::Attribute) -> bool {
    let mut fine = true;
    let filled = decl.filling(field).is_some();
    if filled || field.is_id() {
        cx.error_spanned_by(
            attr,
            format!(
                "`{}` {}: a code goes in a `String` field of its own, beside the number it \
                 shows",
                field.ident.unraw(),
                match filled {
                    true => "is filled by a sequence",
                    false => "is the `_id`",
                },
            ),
        );
        fine = false;
    }
    // A sequence's field is not a `String`, for the reason given above.
    if fine && !is_string(field.ty) {
        cx.error_spanned_by(
            field.ty,
            "a display field holds its code as a `String`: seqid writes the code into it",
        );
        fine = false;
    }
    if let Some(word) = field
        .serde
        .not_serialized
        .iter()
        .chain(&field.serde.custom_serialized)
        .next()
    {
        cx.error_spanned_by(
            word,
            format!(
                "#[serde({word})] on a display field: serde must write the code as it is, \
                 under `{}`, where the unique index and `find_by_{}` look for it",
                field.ser_name,
                field.ident.unraw(),
            ),
        );
        fine = false;
    }
    fine
}

/// What the field named `name` shows as in a code, or why it cannot be shown.
fn shown(cont: &Container, decl: &Declaration, name: &str) -> Result<Shown, String> {
    let Some(field) = cont
        .fields()
        .iter()
        .find(|field| field.ident.unraw() == name)
    else {
        if let Some(meant) = closest::field_name(name, cont.fields()) {
            return Err(format!(
                "`{{{name}}}`: `{}` has no field `{name}`; did you mean `{meant}`?",
                cont.ident.unraw()
            ));
        }
        let known: Vec<String> = cont
            .fields()
            .iter()
            .map(|field| format!("`{}`", field.ident.unraw()))
            .collect();
        return Err(format!(
            "`{{{name}}}`: `{}` has no field `{name}`; a placeholder names a field by its \
             Rust name, one of {}",
            cont.ident.unraw(),
            known.join(", ")
        ));
    };
    if decl.filling(field).is_some() {
        Ok(Shown::Number)
    } else if field.display.is_some() {
        Err(format!(
            "`{{{name}}}` is a display field: a code shows numbers and values, not another \
             code"
        ))
    } else if is_string(field.ty) {
        Ok(Shown::Text)
    } else if is_integer(field.ty) {
        Ok(Shown::Integer)
    } else {
        Err(format!(
            "`{{{name}}}` cannot be shown: a placeholder names a sequence's field, or a \
             field whose type is written `String` or a primitive integer (`i32`, `u64`, \
             ...), whose text tells its values apart"
        ))
    }
}

/// The Rust names of the scope fields of the sequence that fills the field `name`.
fn scope_of(decl: &Declaration, name: &str) -> Vec<String> {
    decl.sequences
        .iter()
        .find(|declared| declared.field.is_some_and(|f| f.ident.unraw() == name))
        .map(|declared| {
            declared
                .scope
                .iter()
                .map(|field| field.ident.unraw().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The format as written, for messages.
fn format_name(format: &LitStr) -> String {
    format!("{:?}", format.value())
}

/// The span of `at` (a range of the format's value) within the literal, where the
/// compiler can point inside a literal; the whole literal elsewhere (stable Rust).
fn span_within(format: &LitStr, at: Range<usize>) -> Span {
    let token = format.token();
    let text = token.to_string();
    // Only a plain literal without escapes maps offsets of its value one to one.
    let plain = text.len() == format.value().len() + 2 && text.starts_with('"');
    match plain && at.start < at.end {
        true => token
            .subspan(at.start + 1..at.end + 1)
            .unwrap_or_else(|| format.span()),
        false => format.span(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, width: Option<usize>, at: Range<usize>) -> Part {
        Part::Field {
            name: name.into(),
            width,
            at,
        }
    }

    /// The invoice struct of the issue: `number` numbered per `year`, a `kind` string and
    /// a `copies` integer.
    fn invoice(format: &str) -> Result<Checked, FormatError> {
        let shown = |name: &str| match name {
            "number" => Ok(Shown::Number),
            "year" | "copies" => Ok(Shown::Integer),
            "kind" | "tenant" => Ok(Shown::Text),
            _ => Err(format!("`{{{name}}}` is not a field")),
        };
        let scope_of = |name: &str| match name {
            "number" => vec!["year".to_owned()],
            _ => Vec::new(),
        };
        check(parse(format)?, shown, scope_of)
    }

    #[test]
    fn formats_parse_into_literals_and_placeholders() {
        assert_eq!(
            parse("INV-{year}-{number:06}").unwrap(),
            [
                Part::Literal("INV-".into()),
                field("year", None, 4..10),
                Part::Literal("-".into()),
                field("number", Some(6), 11..22),
            ]
        );
        assert_eq!(
            parse("{{{number}}}").unwrap(),
            [
                Part::Literal("{".into()),
                field("number", None, 2..10),
                Part::Literal("}".into()),
            ]
        );
    }

    #[test]
    fn malformed_placeholders_are_refused_where_they_are() {
        for (format, at, says) in [
            ("A-{number", 2..9, "opens no placeholder"),
            ("A-}", 2..3, "closes no placeholder"),
            ("{}", 0..2, "names a field"),
            ("{a b}", 0..5, "names a field"),
            ("{number:6}", 0..10, "zero-padded width"),
            ("{number:00}", 0..11, "zero-padded width"),
            ("{number:x}", 0..10, "zero-padded width"),
        ] {
            let refused = parse(format).unwrap_err();
            assert_eq!(refused.at, at, "{format}");
            assert!(
                refused.message.contains(says),
                "{format}: {}",
                refused.message
            );
        }
    }

    #[test]
    fn a_format_that_reads_back_into_number_and_scope_is_accepted() {
        let checked = invoice("INV-{year}-{number:04}").unwrap();
        assert_eq!(checked.sequence, "number");
        assert!(checked.separators.is_empty());
        let checked = invoice("{kind}/{year}.{number}").unwrap();
        assert_eq!(checked.separators, [("kind".to_owned(), '/')]);
        assert!(invoice("{number}-{year}-{copies}x").is_ok());
    }

    #[test]
    fn formats_that_could_repeat_or_not_read_back_are_refused() {
        for (format, says) in [
            ("INV-{number}", "not its scope field `year`"),
            ("INV-{year}", "no sequence number"),
            ("{year}{number}", "side by side"),
            ("{year:04}{number:04}", "side by side"),
            ("{year}-{number}0", "followed by a digit"),
            ("{year}-{number}-{missing}", "`{missing}` is not a field"),
            ("{kind}{year}-{number}", "side by side"),
            ("{kind:04}/{year}-{number}", "a width pads a number"),
        ] {
            let refused = invoice(format).unwrap_err();
            assert!(
                refused.message.contains(says),
                "{format}: {}",
                refused.message
            );
        }
    }
}
