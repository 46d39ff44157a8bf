//! `#[seq_items(last = "field")]` on a document's `Vec` of items: the items are numbered
//! inside the document, and `last` names the integer field that keeps the array's mark
//! (`items` checks both against the struct).

use syn::{Attribute, LitStr};

use super::literal::string;
use super::{Form, settings};
use crate::ctxt::Ctxt;

/// `#[seq_items(...)]` as read.
pub struct SeqItems {
    /// The attribute, where errors about the field point.
    pub attr: Attribute,
    /// `last = "field"`, the Rust name of the mark's field, when given and a string.
    pub last: Option<LitStr>,
}

impl SeqItems {
    /// Reads the `#[seq_items]` of a field, if any; a second one on the field is reported,
    /// and so is a missing `last`.
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Option<SeqItems> {
        let (mut last, mut given) = (None, false);
        let (attr, form) = settings(
            cx,
            attrs,
            "seq_items",
            (REPEATED, LAST_MISSING),
            |key, value, path| match key {
                Some("last") => {
                    given = true;
                    last = string(cx, &value, "`last`", "last = \"lines_last\"");
                }
                _ => cx.error_spanned_by(path, UNKNOWN),
            },
        )?;
        // A refused form is reported already.
        if form != Form::Refused && !given {
            cx.error_spanned_by(attr, LAST_MISSING);
        }
        Some(SeqItems {
            attr: attr.clone(),
            last,
        })
    }
}

const REPEATED: &str =
    "duplicate #[seq_items] attribute: an array is declared once; remove this one";

const LAST_MISSING: &str = "#[seq_items] needs `last`, the integer field that keeps the last \
                            number handed out in the array: #[seq_items(last = \
                            \"lines_last\")] beside a field `lines_last: i64`";

const UNKNOWN: &str = "unknown key in #[seq_items]: expected `last`, e.g. #[seq_items(last = \
                       \"lines_last\")]";
