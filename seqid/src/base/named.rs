//! A sequence named at run time (`db.sequence("userid")`, a number on its own): what its
//! options make of it, checked, and kept for the life of the process. The runtime works
//! on `&'static Sequence`s, which the derive declares as constants; a sequence named at
//! run time is made once instead, and the same name and options give the same
//! `&'static Sequence` ever after: each distinct string is kept once, each distinct
//! sequence once, and each distinct set of options once, to find its sequence again in one
//! lookup. A service names a few; one that names a sequence per value of a request
//! (per tenant, say) keeps one per value ever named, for the life of the process.

use std::sync::{Mutex, OnceLock, PoisonError};

use crate::base::error::Error;
use crate::base::layout::construct::stepped;
use crate::base::layout::{Layout, ScopeEncoding};
use crate::base::sequence::construct::BLANK;
use crate::base::sequence::{CounterWriteConcern, Sequence, Strategy};

/// The options a sequence named at run time was given, as given: what
/// `NamedSequence`'s setters set.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Spec {
    pub name: String,
    /// `None`: the layout's tool's own (`counters` for the tutorial).
    pub counters: Option<String>,
    pub layout: Layout,
    /// `None`: the layout's tool's first id (1, or 0 for the mongoose plugins that count
    /// from 0).
    pub start: Option<i64>,
    /// `None`: 1 (the layout's own).
    pub step: Option<u32>,
    pub field: Option<String>,
    pub collection: Option<String>,
    pub counter_write_concern: CounterWriteConcern,
    pub strategy: Strategy,
    /// The scope fields, in the order given.
    pub scope: Vec<String>,
}

impl Spec {
    /// The options of a counters sequence `name` in the tutorial's layout.
    pub(crate) fn new(name: &str) -> Self {
        Spec {
            name: name.to_owned(),
            counters: None,
            layout: Layout::TUTORIAL,
            start: None,
            step: None,
            field: None,
            collection: None,
            counter_write_concern: CounterWriteConcern::Majority,
            strategy: Strategy::Counters,
            scope: Vec::new(),
        }
    }
}

/// The sequence `spec` names, made once for the process (see the module's notes), and
/// checked: an option out of range is [`Error::InvalidOption`], naming the sequence (kept
/// all the same: the error holds it).
pub(crate) fn sequence(spec: &Spec) -> Result<&'static Sequence, Error> {
    let seq = resolved(spec);
    check(seq)?;
    Ok(seq)
}

/// The sequence `spec` names: found by the options as given when they were given before,
/// in one lookup, else made and kept. A service names its sequences on every call
/// (`db.sequence("ticket").block(25).next()`), where making the sequence again and
/// finding it among the kept ones (its strings and itself hashed whole) was half of the
/// call's own work (BENCHMARKS.md, *Numbers on their own*).
fn resolved(spec: &Spec) -> &'static Sequence {
    if let Some(&seq) = kept().resolved.get(spec) {
        return seq;
    }
    let seq = interned(made(spec));
    kept().resolved.insert(spec.clone(), seq);
    seq
}

/// The sequence `spec` names, its strings kept for the process. What is not given is
/// the layout's tool's own (its counters collection, its first id).
fn made(spec: &Spec) -> Sequence {
    let layout = spec.layout;
    let mut seq = BLANK;
    seq.name = string(&spec.name);
    seq.counters = spec.counters.as_deref().map_or(layout.counters, string);
    seq.layout = spec.step.map_or(layout, |step| stepped(layout, step));
    seq.strategy = spec.strategy;
    seq.counter_write_concern = spec.counter_write_concern;
    seq.start = spec.start.unwrap_or(layout.first_id);
    seq.field = spec.field.as_deref().map_or("_id", string);
    // No collection: the sequence numbers no documents of seqid's (see `Sequence::collection`).
    seq.collection = spec.collection.as_deref().map_or("", string);
    let fields: Vec<&'static str> = spec.scope.iter().map(|field| string(field)).collect();
    seq.scope = scope_fields(fields);
    seq
}

/// Why `seq`'s options cannot make a sequence, as the derive refuses them at compile time.
fn check(seq: &'static Sequence) -> Result<(), Error> {
    let refused = |option, value: String, reason| {
        Err(Error::InvalidOption {
            sequence: seq,
            option,
            value: value.into(),
            reason,
        })
    };
    if seq.name.is_empty() {
        return refused(
            "name",
            "\"\"".into(),
            "a sequence needs a name: its counter's `_id`, or the name its layout finds the \
             counter by",
        );
    }
    if seq.name.starts_with('[') {
        return refused(
            "name",
            format!("{:?}", seq.name),
            "a sequence name cannot start with `[`: seqid keeps that for the counters of \
             scoped sequences, whose `_id` is `[\"<name>\",<scope values>...]`",
        );
    }
    if seq.counters.is_empty() || seq.counters.contains(['$', '\0']) {
        return refused(
            "counters",
            format!("{:?}", seq.counters),
            "a collection name is not empty and holds no `$` and no null character",
        );
    }
    if let Strategy::Block { block_size: 0 } = seq.strategy {
        return refused(
            "block",
            "0".into(),
            "a block holds at least one id: give a block size of 1 or more",
        );
    }
    if seq.layout.step == 0 {
        return refused(
            "step",
            "0".into(),
            "ids a step of 0 apart would all be the same id: give a step of 1 or more",
        );
    }
    if seq.layout.step != 1 && seq.layout.adds_one {
        return refused(
            "step",
            seq.layout.step.to_string(),
            "this layout's tool always adds 1 to its counter, so ids a step apart would not \
             be its ids",
        );
    }
    if seq.start < 0 {
        return refused("start", seq.start.to_string(), "the first id is 0 or more");
    }
    if seq.field.is_empty() {
        return refused("field", "\"\"".into(), "a field has a name");
    }
    for (at, field) in seq.scope.iter().enumerate() {
        if field.is_empty() {
            return refused("scope", "\"\"".into(), "a scope field has a name");
        }
        if seq.scope[..at].contains(field) {
            return refused(
                "scope",
                format!("{field:?}"),
                "the scope field is given twice: each field of a scope is named once, with \
                 its value",
            );
        }
    }
    if !seq.scope.is_empty() && seq.layout.scope == ScopeEncoding::Unscoped {
        return refused(
            "scope",
            format!("{:?}", seq.scope),
            "the layout's tool finds its counter by the sequence alone, with no scope: \
             use the tutorial's layout (seqid's own) or mongoose-sequence's for a scope",
        );
    }
    Ok(())
}

/// Everything named at run time so far, kept for the life of the process. foldhash, as
/// the handle's maps: its seeds are random per process and per map.
#[derive(Default)]
struct Kept {
    strings: foldhash::HashSet<&'static str>,
    scopes: foldhash::HashSet<&'static [&'static str]>,
    sequences: foldhash::HashSet<&'static Sequence>,
    /// The options given, as given, and the sequence they made.
    resolved: foldhash::HashMap<Spec, &'static Sequence>,
}

fn kept() -> std::sync::MutexGuard<'static, Kept> {
    static KEPT: OnceLock<Mutex<Kept>> = OnceLock::new();
    let kept = KEPT.get_or_init(Mutex::default);
    // Every update below inserts whole values: a poisoned lock still holds a sound set.
    kept.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `value`, kept once for the process.
fn string(value: &str) -> &'static str {
    let mut kept = kept();
    if let Some(&kept) = kept.strings.get(value) {
        return kept;
    }
    let leaked: &'static str = Box::leak(value.into());
    kept.strings.insert(leaked);
    leaked
}

/// The scope fields `fields`, kept once for the process (none: the empty slice).
fn scope_fields(fields: Vec<&'static str>) -> &'static [&'static str] {
    if fields.is_empty() {
        return &[];
    }
    let mut kept = kept();
    if let Some(&kept) = kept.scopes.get(fields.as_slice()) {
        return kept;
    }
    let leaked: &'static [&'static str] = Box::leak(fields.into_boxed_slice());
    kept.scopes.insert(leaked);
    leaked
}

/// `seq`, kept once for the process: equal sequences are one `&'static Sequence`.
fn interned(seq: Sequence) -> &'static Sequence {
    let mut kept = kept();
    if let Some(&kept) = kept.sequences.get(&seq) {
        return kept;
    }
    let leaked: &'static Sequence = Box::leak(Box::new(seq));
    kept.sequences.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(spec: &Spec) -> (&'static str, String, String) {
        match sequence(spec) {
            Err(error @ Error::InvalidOption { option, .. }) => {
                assert_eq!(error.sequence(), spec.name);
                let value = match &error {
                    Error::InvalidOption { value, .. } => value.to_string(),
                    _ => unreachable!(),
                };
                (option, value, error.to_string())
            }
            other => panic!("{spec:?}: {other:?}"),
        }
    }

    #[test]
    fn the_same_name_and_options_are_one_sequence() {
        let one = sequence(&Spec::new("named_userid")).unwrap();
        let two = sequence(&Spec::new(&String::from("named_userid"))).unwrap();
        assert!(std::ptr::eq(one, two));
        assert!(std::ptr::eq(one.name, two.name));
        let mut other = Spec::new("named_userid");
        other.strategy = Strategy::Block { block_size: 10 };
        let three = sequence(&other).unwrap();
        assert!(!std::ptr::eq(one, three));
        // The strings are kept once, whatever sequence holds them.
        assert!(std::ptr::eq(one.name, three.name));
        assert_eq!(
            (
                one.counters,
                one.start,
                one.layout,
                one.collection,
                one.field
            ),
            ("counters", 1, Layout::TUTORIAL, "", "_id")
        );
    }

    #[test]
    fn a_tool_s_layout_brings_its_counters_and_first_id() {
        let mut spec = Spec::new("Book");
        spec.layout = Layout::MONGOOSE_AUTO_INCREMENT;
        let seq = sequence(&spec).unwrap();
        assert_eq!((seq.counters, seq.start), ("identitycounters", 0));
        spec.layout = Layout::MONGOENGINE;
        spec.counters = Some("mine".into());
        spec.start = Some(10);
        let seq = sequence(&spec).unwrap();
        assert_eq!((seq.counters, seq.start), ("mine", 10));
        spec.step = Some(3);
        spec.layout = Layout::TUTORIAL;
        assert_eq!(sequence(&spec).unwrap().layout.step, 3);
    }

    #[test]
    fn scope_fields_keep_their_order() {
        let mut spec = Spec::new("ticket");
        spec.scope = vec!["project".into(), "year".into()];
        assert_eq!(sequence(&spec).unwrap().scope, ["project", "year"]);
        spec.scope.reverse();
        assert_eq!(sequence(&spec).unwrap().scope, ["year", "project"]);
    }

    #[test]
    fn every_option_out_of_range_is_refused_with_its_cause() {
        let spec = |edit: fn(&mut Spec)| {
            let mut spec = Spec::new("named_refused");
            edit(&mut spec);
            spec
        };
        let (option, value, message) = refused(&Spec::new(""));
        assert_eq!((option, value.as_str()), ("name", "\"\""));
        assert!(message.contains("a sequence needs a name"), "{message}");
        let (option, _, message) = refused(&Spec::new("[x"));
        assert_eq!(option, "name");
        assert!(message.contains("cannot start with `[`"), "{message}");
        type Case = (fn(&mut Spec), &'static str, &'static str, &'static str);
        let cases: [Case; 8] = [
            (
                |s| s.strategy = Strategy::Block { block_size: 0 },
                "block",
                "0",
                "a block holds at least one id",
            ),
            (|s| s.step = Some(0), "step", "0", "a step of 0"),
            (
                |s| {
                    s.layout = Layout::MONGOENGINE;
                    s.step = Some(2)
                },
                "step",
                "2",
                "always adds 1",
            ),
            (|s| s.start = Some(-1), "start", "-1", "0 or more"),
            (
                |s| s.scope = vec!["project".into(), "project".into()],
                "scope",
                "\"project\"",
                "given twice",
            ),
            (
                |s| {
                    s.layout = Layout::GO;
                    s.scope = vec!["project".into()]
                },
                "scope",
                "[\"project\"]",
                "with no scope",
            ),
            (
                |s| s.counters = Some(String::new()),
                "counters",
                "\"\"",
                "not empty",
            ),
            (
                |s| s.field = Some(String::new()),
                "field",
                "\"\"",
                "a field has a name",
            ),
        ];
        for (edit, option, value, says) in cases {
            let (got, got_value, message) = refused(&spec(edit));
            assert_eq!((got, got_value.as_str()), (option, value), "{message}");
            assert!(message.contains(says), "{message}");
            assert!(
                message.starts_with("sequence `named_refused`: "),
                "{message}"
            );
        }
    }
}
