//! `numbered = "later"`: a sequence whose number `number_draft` takes when a stored draft
//! is issued, instead of `insert`. Each sequence numbered later is checked to be one a
//! draft can wait for: on a field of its own, `Option`, with a counter, and in a type whose
//! every sequence is numbered later (`number_draft` numbers them all, in one update).

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
    // Drafts are stored as they are, with the driver, and numbered when issued: a
    // sequence numbered at insert would never be taken. Several sequences are numbered
    // later together, by one update. Said once, at the first sequence numbered later.
    let first_later = decl.sequences.iter().find(|d| d.attr.numbered_later());
    if !first_later.is_some_and(|first| std::ptr::eq(first, declared)) {
        return None;
    }
    let at_insert: Vec<&Declared> = decl
        .sequences
        .iter()
        .filter(|other| !other.attr.numbered_later())
        .collect();
    let names: Vec<String> = at_insert
        .iter()
        .map(|other| format!("`{}`", other.field_name()))
        .collect();
    let (numbers, that, it) = match names.len() {
        0 => return None,
        1 => (names[0].clone(), "that number", "it"),
        _ => (names.join(" and "), "those numbers", "them"),
    };
    let remedy = match at_insert.iter().any(|other| other.on_id) {
        // `_id` cannot wait for its number: the draft is stored and found by it.
        true => "let the driver fill `_id` with an ObjectId and put every sequence of the \
                 type on a field of its own, numbered later"
            .to_owned(),
        false => format!(
            "number {it} later too (`numbered = \"later\"`: every sequence of the type is \
             then numbered by one update)"
        ),
    };
    Some(format!(
        "a type numbered later is not inserted by seqid (its drafts are stored as they are, \
         with the driver, and numbered when issued), and `{ident}` also numbers {numbers} at \
         insert: {that} would never be taken; {remedy}, or remove `numbered = \"later\"`",
        ident = cont.ident.unraw(),
    ))
}
