//! `#[seq_display("...")]` on a field: the format of the display code seqid writes into
//! it, read as written (`display` parses and checks it against the struct).

use syn::{Attribute, LitStr, Meta};

use super::first;
use crate::ctxt::Ctxt;

/// `#[seq_display("format")]` on a field: the format of the display code seqid writes
/// into it. `format` is `None` when the attribute was malformed (reported).
pub struct SeqDisplay {
    pub attr: Attribute,
    pub format: Option<LitStr>,
}

impl SeqDisplay {
    /// Reads the `#[seq_display]` of a field, if any; a second one is reported.
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Option<SeqDisplay> {
        let first = first(cx, attrs, "seq_display", REPEATED)?;
        let format = match &first.meta {
            Meta::List(list) => match list.parse_args::<LitStr>() {
                Ok(format) => Some(format),
                Err(_) => {
                    cx.error_spanned_by(&list.tokens, DISPLAY_ARGUMENT);
                    None
                }
            },
            meta => {
                cx.error_spanned_by(meta, DISPLAY_ARGUMENT);
                None
            }
        };
        Some(SeqDisplay {
            attr: first.clone(),
            format,
        })
    }
}

const REPEATED: &str = "duplicate #[seq_display] attribute: a field holds one code; put \
                        another format on a `String` field of its own";

const DISPLAY_ARGUMENT: &str = "#[seq_display] takes the code's format, one string literal: \
                                #[seq_display(\"INV-{year}-{number:04}\")]";
