//! `#[seq_id("name", key = value, ...)]`, on the struct or on a field: one parser for both.
//! Which attribute declares a sequence, and whether a key is in its place there, is
//! decided by `declaration`, which sees the whole struct.

use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Attribute, Expr, Ident, LitStr, Meta, Token};

use super::first;
use super::kind::{CounterWrite, HoldsKind, LayoutKind, NumberedKind, StrategyKind};
use super::literal::{boolean, bounded, choice, counter_key, positive_u32, scope, string};
use crate::ctxt::Ctxt;

const REPEATED: &str = "duplicate #[seq_id] attribute: an item declares one sequence at most \
                        (a field holds one number); declare another sequence on a field of its \
                        own";

/// A `key = value` setting. `value` is `None` when the value was invalid: that error is
/// already reported, and checks that depend on the value are skipped rather than piled on.
pub struct Setting<T> {
    pub key: Ident,
    pub value: Option<T>,
}

/// The value of a setting that was given and valid.
pub fn value<T>(setting: &Option<Setting<T>>) -> Option<&T> {
    setting.as_ref().and_then(|setting| setting.value.as_ref())
}

/// The first argument of `#[seq_id(...)]`.
pub enum Name {
    /// A string literal: the sequence name.
    Given(LitStr),
    /// Nothing before the keys (or no arguments): the attribute names no sequence.
    Absent,
    /// Something unreadable where the name goes, already reported: the attribute meant
    /// to name a sequence.
    Invalid,
}

/// The keys of `#[seq_id]` after the name, each written once: its slot in [`SeqId`] (`None`
/// until given) and how its value reads (`None` when invalid: reported), the attribute's
/// context, the value and the key's name bound to the three names given.
macro_rules! keys {
    (|$cx:ident, $value:ident, $name:ident| $($(#[$doc:meta])* $slot:ident: $ty:ty = $parsed:expr,)*) => {
        /// `#[seq_id("name", key = value, ...)]`, each part as written. Absent keys take their
        /// defaults at expansion.
        pub struct SeqId {
            /// The whole attribute, where errors about the attribute itself point.
            pub attr: Attribute,
            pub name: Name,
            $($(#[$doc])* pub $slot: Option<Setting<$ty>>,)*
            /// The keys stored (known ones, not repeated), in the order written, for checks
            /// that refuse keys by where the attribute is: their errors then come in source
            /// order.
            pub keys: Vec<Ident>,
        }

        /// The keys `#[seq_id]` accepts after the name, for the "unknown key" message.
        const KEYS: &[&str] = &[$(stringify!($slot)),*];

        impl SeqId {
            /// A `#[seq_id]` with nothing read yet.
            fn unread(attr: &Attribute) -> SeqId {
                SeqId {
                    attr: attr.clone(),
                    name: Name::Absent,
                    $($slot: None,)*
                    keys: Vec::new(),
                }
            }

            /// Reads `key`'s value into the slot of the same name.
            fn set(&mut self, $cx: &Ctxt, key: Ident, $value: &Expr) {
                let $name = key.unraw().to_string();
                let known = match $name.as_str() {
                    $(stringify!($slot) => put($cx, &mut self.$slot, key, $parsed),)*
                    _ => {
                        let keys: Vec<String> = KEYS.iter().map(|key| format!("`{key}`")).collect();
                        let message = format!(
                            "unknown key `{}` in #[seq_id]: expected one of {}",
                            $name,
                            keys.join(", ")
                        );
                        $cx.error_spanned_by(&key, message);
                        None
                    }
                };
                self.keys.extend(known);
            }
        }
    };
}

keys! {
    |cx, value, name|
    collection: LitStr = string(cx, value, "`collection`", "\"users\""),
    counters: LitStr = string(cx, value, "`counters`", "\"counters\""),
    strategy: StrategyKind = {
        let choices = StrategyKind::ALL.map(|kind| (kind.name(), kind));
        let expected = "\"counters\", \"optimistic\", \"block\" or \"gapless\"";
        choice(cx, value, &name, "\"block\"", &choices, expected)
    },
    max_attempts: u32 = positive_u32(cx, value, &name),
    time_budget_ms: u32 = positive_u32(cx, value, &name),
    block_size: u32 = positive_u32(cx, value, &name),
    prefetch: bool = boolean(cx, value, &name),
    counter_write_concern: CounterWrite = {
        let choices = CounterWrite::ALL.map(|concern| (concern.name(), concern));
        let expected = "\"majority\" (the default) or \"database\" (the database's own)";
        choice(cx, value, &name, "\"majority\"", &choices, expected)
    },
    // 0 is a first id for the tools that count from 0 (`valid` then asks for an
    // `Option` field, where 0 is not "unset").
    start: i64 = bounded(cx, value, &name, "i64", "an i64", 0, i64::MAX as u128)
        .map(|n| n as i64),
    step: u32 = positive_u32(cx, value, &name),
    /// The fields, by Rust name, whose values the numbers are counted per.
    scope: Vec<LitStr> = scope(cx, value),
    layout: LayoutKind = {
        let choices = LayoutKind::ALL.map(|kind| (kind.name(), kind));
        let names: Vec<String> =
            choices.iter().map(|(name, _)| format!("{name:?}")).collect();
        let expected = format!(
            "one of {}; for another tool's counter, describe it with `counter_name`, \
             `counter_field`, `counter_value` and `counter_holds` instead",
            names.join(", ")
        );
        choice(cx, value, &name, "\"mongoengine\"", &choices, &expected)
    },
    counter_name: LitStr = counter_key(cx, value, &name, "\"model\""),
    counter_field: LitStr = counter_key(cx, value, &name, "\"field\""),
    counter_value: LitStr = counter_key(cx, value, &name, "\"count\""),
    counter_holds: HoldsKind = {
        let choices = [("last", HoldsKind::Last), ("next", HoldsKind::Next)];
        let expected = "\"last\" (the counter holds the last id handed out, the \
                        default) or \"next\" (the next id to hand out)";
        choice(cx, value, &name, "\"last\"", &choices, expected)
    },
    numbered: NumberedKind = {
        let choices = [("insert", NumberedKind::Insert), ("later", NumberedKind::Later)];
        let expected = "\"insert\" (`insert` numbers the document, the default) or \
                        \"later\" (drafts are stored without a number, and \
                        `number_draft` numbers each when it is issued)";
        choice(cx, value, &name, "\"later\"", &choices, expected)
    },
}

impl SeqId {
    /// Reads the `#[seq_id]` of a struct or of a field, if any. Only the first counts: a
    /// second one is reported.
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Option<SeqId> {
        let first = first(cx, attrs, "seq_id", REPEATED)?;
        let mut seq_id = SeqId::unread(first);
        seq_id.parse(cx, first);
        Some(seq_id)
    }

    /// The sequence name, when one was written and is a string literal.
    pub fn name(&self) -> Option<&LitStr> {
        match &self.name {
            Name::Given(name) => Some(name),
            Name::Absent | Name::Invalid => None,
        }
    }

    /// Whether the attribute says `numbered = "later"`.
    pub fn numbered_later(&self) -> bool {
        matches!(
            self.numbered,
            Some(Setting {
                value: Some(NumberedKind::Later),
                ..
            })
        )
    }

    /// Whether the attribute names a sequence (its name may be invalid, and reported).
    pub fn names_a_sequence(&self) -> bool {
        !matches!(self.name, Name::Absent)
    }

    fn parse(&mut self, cx: &Ctxt, attr: &Attribute) {
        let list = match &attr.meta {
            // A bare `#[seq_id]` names nothing; whether that is an error depends on where
            // it is and what else the struct declares.
            Meta::Path(_) => return,
            Meta::List(list) => list,
            Meta::NameValue(meta) => {
                self.name = Name::Invalid;
                cx.error_spanned_by(
                    meta,
                    "the arguments of #[seq_id] go in parentheses: #[seq_id(\"name\", ...)]",
                );
                return;
            }
        };
        if let Err(err) = list.parse_args_with(|input: ParseStream| self.parse_args(cx, input)) {
            // The arguments stopped being readable: do not also report a missing name.
            if let Name::Absent = self.name {
                self.name = Name::Invalid;
            }
            cx.syn_error(err);
        }
    }

    /// Parses `"name", key = value, ...`.
    fn parse_args(&mut self, cx: &Ctxt, input: ParseStream) -> syn::Result<()> {
        let mut first = true;
        while !input.is_empty() {
            if input.peek(Ident::peek_any) && input.peek2(Token![=]) {
                let key = input.call(Ident::parse_any)?;
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                self.set(cx, key, &value);
            } else {
                let value: Expr = input.parse()?;
                if first {
                    self.name = match string(cx, &value, "the sequence name", "\"users\"") {
                        Some(name) => Name::Given(name),
                        None => Name::Invalid,
                    };
                } else {
                    cx.error_spanned_by(
                        &value,
                        "unexpected argument: after the sequence name, write `key = value`",
                    );
                }
            }
            first = false;
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(())
    }
}

/// Stores a setting, refusing a key given twice (the error points at the second).
/// Returns the key when stored.
fn put<T>(cx: &Ctxt, slot: &mut Option<Setting<T>>, key: Ident, value: Option<T>) -> Option<Ident> {
    if slot.is_some() {
        cx.error_spanned_by(
            &key,
            format!("duplicate key `{}` in #[seq_id]", key.unraw()),
        );
        None
    } else {
        *slot = Some(Setting {
            key: key.clone(),
            value,
        });
        Some(key)
    }
}
