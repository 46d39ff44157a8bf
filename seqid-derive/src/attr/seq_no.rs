//! `#[seq_no]` or `#[seq_no(start = N, step = M)]` on the number field of an item type
//! (`#[derive(Item)]`): the field holds the item's number within its document.

use syn::{Attribute, Expr, LitInt};

use super::literal::{bounded, positive_u32};
use super::settings;
use crate::ctxt::Ctxt;

/// `#[seq_no(...)]` as read: its start and step when given and valid.
pub struct SeqNo {
    /// The attribute, where errors about the field point.
    pub attr: Attribute,
    /// `start = N`, from 0 to `i64::MAX`, with the expression it was read from.
    pub start: Option<(i64, Expr)>,
    /// `step = M`, from 1 to `u32::MAX`.
    pub step: Option<u32>,
}

impl SeqNo {
    /// Reads the `#[seq_no]` of a field, if any; a second one on the field is reported.
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Option<SeqNo> {
        let (mut start, mut step) = (None, None);
        let (attr, _) = settings(
            cx,
            attrs,
            "seq_no",
            (REPEATED, ARGUMENTS),
            |key, value, path| match key {
                Some("start") => {
                    let read = bounded(cx, &value, "start", "i64", "an i64", 0, i64::MAX as u128);
                    start = read.map(|n| (n as i64, value));
                }
                Some("step") => step = positive_u32(cx, &value, "step"),
                _ => cx.error_spanned_by(path, UNKNOWN),
            },
        )?;
        Some(SeqNo {
            attr: attr.clone(),
            start,
            step,
        })
    }

    /// The first number, 1 unless `start` says otherwise.
    pub fn start(&self) -> i64 {
        self.start.as_ref().map_or(1, |(start, _)| *start)
    }

    /// The step, 1 unless `step` says otherwise.
    pub fn step(&self) -> i64 {
        self.step.map_or(1, i64::from)
    }

    /// The literal of `start`, as a token for the expansion.
    pub fn start_literal(&self) -> LitInt {
        LitInt::new(&format!("{}i64", self.start()), self.attr.pound_token.span)
    }
}

const REPEATED: &str =
    "duplicate #[seq_no] attribute: an item has one number field; remove this one";

const ARGUMENTS: &str = "the arguments of #[seq_no] go in parentheses: #[seq_no] or \
                         #[seq_no(start = 1, step = 1)]";

const UNKNOWN: &str = "unknown key in #[seq_no]: expected `start` or `step`, e.g. \
                       #[seq_no(start = 10, step = 10)]";
