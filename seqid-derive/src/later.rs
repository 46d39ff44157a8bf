//! `numbered = "later"`: a sequence whose number `number_draft` takes when a stored draft
//! is issued, instead of `insert`. Each sequence numbered later is checked to be one a
//! draft can wait for: on a field of its own, `Option`, with a counter, and alone in its
//! type.

use syn::ext::IdentExt;

use crate::ast::Container;
use crate::attr::kind::{NumberedKind, StrategyKind};
use crate::attr::seq_id::Setting;
use crate::ctxt::Ctxt;
use crate::declaration::{Declaration, Declared};
use crate::types::is_option;

/// Reports, at its `numbered` key, the first reason `declared` cannot be numbered later,
/// if it says `numbered = "later"`.
pub fn check(cx: &Ctxt, cont: &Container, decl: &Declaration, declared: &Declared) {
    let Some(Setting {
        key,
        value: Some(NumberedKind::Later),
    }) = &declared.attr.numbered
    else {
        return;
    };
    if let Some(problem) = problem(cont, decl, declared) {
        cx.error_spanned_by(key, problem);
    }
}

/// Why `declared` cannot be numbered later, if it cannot: the first reason only.
fn problem(cont: &Container, decl: &Declaration, declared: &Declared) -> Option<String> {
    if declared.on_id {
        return Some(
            "the `_id` sequence cannot be numbered later: a draft is stored before it has its \
             number, and needs an `_id` to be stored and found by; put the sequence on a \
             field of its own, #[seq_id(\"name\", numbered = \"later\")] on an `Option` field, \
             and let the driver fill `_id` with an ObjectId"
                .to_owned(),
        );
    }
    if declared.strategy() == StrategyKind::Optimistic {
        return Some(
            "strategy = \"optimistic\" cannot number later: it numbers from the largest \
             stored id at insert, and keeps no counter to number a draft from; use \
             strategy = \"counters\", \"block\" or \"gapless\""
                .to_owned(),
        );
    }
    if let Some(field) = declared.field
        && !is_option(field.ty)
    {
        let ty = field.ty;
        let ty = quote::quote!(#ty).to_string().replace(' ', "");
        return Some(format!(
            "a sequence numbered later fills an `Option` field: a draft holds `None` in `{name}` \
             until it is numbered, and a plain `{ty}` would store 0, which the unique index \
             would count as a number; make the field `Option<{ty}>`",
            name = field.ident.unraw(),
        ));
    }
    let others: Vec<String> = decl
        .sequences
        .iter()
        .filter(|other| !std::ptr::eq(*other, declared))
        .map(|other| format!("`{}`", other.field_name()))
        .collect();
    let (numbers, those, other) = match others.len() {
        0 => return None,
        1 => (others[0].clone(), "that number", "the other"),
        _ => (others.join(" and "), "those numbers", "the others"),
    };
    Some(format!(
        "a type numbered later declares one sequence: `{ident}` also numbers {numbers}, and \
         {those} would be taken at insert, but a type numbered later is not inserted by seqid \
         (its drafts are stored as they are, with the driver); number later the one sequence \
         of the type and remove {other}, or remove `numbered = \"later\"`",
        ident = cont.ident.unraw(),
    ))
}
