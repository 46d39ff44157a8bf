//! The values written after `key =` in `#[seq_id]`, each read from its expression: a
//! string literal, one of a few names, an integer within the key's range, the scope's
//! fields, a field name of the counter. A value that is not one is reported, and read as
//! `None`.

use syn::{Expr, Lit, LitStr, UnOp};

use crate::ctxt::Ctxt;

/// Strips the invisible groups `macro_rules!` wraps around fragments.
fn ungroup(mut expr: &Expr) -> &Expr {
    while let Expr::Group(group) = expr {
        expr = &group.expr;
    }
    expr
}

/// A string literal; `what` and `example` complete the message when it is not one.
pub fn string(cx: &Ctxt, value: &Expr, what: &str, example: &str) -> Option<LitStr> {
    if let Expr::Lit(lit) = ungroup(value)
        && let Lit::Str(s) = &lit.lit
    {
        return Some(s.clone());
    }
    cx.error_spanned_by(
        value,
        format!("{what} must be a string literal, e.g. {example}"),
    );
    None
}

/// A string literal naming one of `choices`: its value. Another name is reported at the
/// literal, with what was `expected`.
pub fn choice<T: Copy>(
    cx: &Ctxt,
    value: &Expr,
    key: &str,
    example: &str,
    choices: &[(&str, T)],
    expected: &str,
) -> Option<T> {
    let lit = string(cx, value, &format!("`{key}`"), example)?;
    let found = choices.iter().find(|(name, _)| *name == lit.value());
    if found.is_none() {
        let message = format!("unknown {key} {:?}: expected {expected}", lit.value());
        cx.error_spanned_by(&lit, message);
    }
    found.map(|&(_, choice)| choice)
}

/// `scope = "field"` or `scope = ["field", ...]`: the string literals, or `None` when
/// there are none to check further (reported). In an array, the literals among other
/// things are kept, so that each is still checked against the fields.
pub fn scope(cx: &Ctxt, value: &Expr) -> Option<Vec<LitStr>> {
    const EXAMPLE: &str = "e.g. scope = \"project\" or scope = [\"tenant\", \"year\"]";
    match ungroup(value) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => Some(vec![lit.clone()]),
        Expr::Array(array) if array.elems.is_empty() => {
            cx.error_spanned_by(
                array,
                format!(
                    "`scope` needs at least one field; for a sequence that is not scoped, \
                     remove `scope` ({EXAMPLE})"
                ),
            );
            None
        }
        Expr::Array(array) => {
            let mut fields = Vec::new();
            for elem in &array.elems {
                match ungroup(elem) {
                    Expr::Lit(syn::ExprLit {
                        lit: Lit::Str(lit), ..
                    }) => fields.push(lit.clone()),
                    _ => cx.error_spanned_by(
                        elem,
                        "each field of `scope` must be a string literal naming a field of \
                         the struct, e.g. \"project\"",
                    ),
                }
            }
            Some(fields)
        }
        _ => {
            cx.error_spanned_by(
                value,
                format!(
                    "`scope` must be a string literal naming a field of the struct, or an \
                     array of them, {EXAMPLE}"
                ),
            );
            None
        }
    }
}

/// A field name of the counter document (`counter_name`, `counter_field`,
/// `counter_value`): a string literal MongoDB takes as a top-level field name.
pub fn counter_key(cx: &Ctxt, value: &Expr, key: &str, example: &str) -> Option<LitStr> {
    let lit = string(cx, value, &format!("`{key}`"), example)?;
    let name = lit.value();
    let why = if name.is_empty() {
        Some("must not be empty")
    } else if name.starts_with('$') {
        Some("must not start with `$`: MongoDB reads that as an operator")
    } else if name.contains('.') {
        Some("must not contain `.`: MongoDB reads that as a path into a subdocument")
    } else if name.contains('\0') {
        Some("must not contain a NUL character")
    } else {
        None
    };
    match why {
        Some(why) => {
            cx.error_spanned_by(
                &lit,
                format!("`{key}` names a field of the counter, so it {why}"),
            );
            None
        }
        None => Some(lit),
    }
}

/// An integer literal from 1 to `u32::MAX`, the range of `max_attempts`, `time_budget_ms`,
/// `block_size` and `step`.
pub fn positive_u32(cx: &Ctxt, value: &Expr, key: &str) -> Option<u32> {
    bounded(cx, value, key, "u32", "a u32", 1, u32::MAX.into()).map(|n| n as u32)
}

/// A boolean literal, `true` or `false` (`prefetch`).
pub fn boolean(cx: &Ctxt, value: &Expr, key: &str) -> Option<bool> {
    if let Expr::Lit(lit) = ungroup(value)
        && let Lit::Bool(b) = &lit.lit
    {
        return Some(b.value);
    }
    cx.error_spanned_by(
        value,
        format!("`{key}` must be `true` or `false`, e.g. {key} = false"),
    );
    None
}

/// An integer literal from `min` to `max`, the range of the setting `key`, of type
/// `type_name` (`a_type` in messages: "an i64").
pub fn bounded(
    cx: &Ctxt,
    value: &Expr,
    key: &str,
    type_name: &str,
    a_type: &str,
    min: u128,
    max: u128,
) -> Option<u128> {
    match ungroup(value) {
        Expr::Lit(lit) => {
            if let Lit::Int(int) = &lit.lit {
                if !(int.suffix().is_empty() || int.suffix() == type_name) {
                    cx.error_spanned_by(int, format!("`{key}` is {a_type}: drop the suffix"));
                    return None;
                }
                return match int.base10_parse::<u128>() {
                    Ok(n) if n < min => {
                        cx.error_spanned_by(int, format!("`{key}` must be at least {min}"));
                        None
                    }
                    Ok(n) if n <= max => Some(n),
                    _ => {
                        cx.error_spanned_by(
                            int,
                            format!("`{key}` must fit in {a_type} (at most {max})"),
                        );
                        None
                    }
                };
            }
        }
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => {
            if let Expr::Lit(lit) = ungroup(&unary.expr)
                && let Lit::Int(_) = lit.lit
            {
                cx.error_spanned_by(value, format!("`{key}` must be at least {min}"));
                return None;
            }
        }
        _ => {}
    }
    cx.error_spanned_by(
        value,
        format!("`{key}` must be an integer literal, e.g. {key} = 100"),
    );
    None
}
