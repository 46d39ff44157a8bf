//! A sequence named at run time (`db.sequence("userid")`, a number on its own): what its
//! options make of it, checked, and kept for the life of the process. The runtime works
//! on `&'static Sequence`s, which the derive declares as constants; a sequence named at
//! run time is made once instead, and the same name and options give the same
//! `&'static Sequence` ever after: each distinct string is kept once, each distinct
//! sequence once, and each distinct set of options once, to find its sequence again in one
//! lookup. A service names a few; one that names a sequence per value of a request
//! (per tenant, say) keeps one per value ever named, for the life of the process.
//!
//! A name the program also declares (`#[seq_id("order", ...)]` on a type, found through
//! `named::declared`) is that type's sequence: the call takes the declared options it does
//! not give, and an option it gives that differs from the declaration is refused, naming
//! the type, before anything is read or written ([`with_declarations`]).

pub(crate) mod declared;

use std::sync::{Mutex, OnceLock, PoisonError};

use crate::base::error::{Error, ErrorKind};
use crate::named::declared::Declaration;
use crate::schema::layout::construct::stepped;
use crate::schema::layout::{CounterWriteConcern, Layout, ScopeEncoding};
use crate::schema::sequence::construct::BLANK;
use crate::schema::sequence::{Sequence, Strategy};

/// The options a sequence named at run time was given, as given: what
/// `NamedSequence`'s setters set. `None`: not given (the declaring type's, else the
/// default).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Spec {
    pub name: String,
    /// Default: the layout's tool's own (`counters` for the tutorial).
    pub counters: Option<String>,
    /// Default: the tutorial's.
    pub layout: Option<Layout>,
    /// Default: the layout's tool's first id (1, or 0 for the mongoose plugins that count
    /// from 0).
    pub start: Option<i64>,
    /// Default: 1 (the layout's own).
    pub step: Option<u32>,
    pub field: Option<String>,
    pub collection: Option<String>,
    /// Default: majority.
    pub counter_write_concern: Option<CounterWriteConcern>,
    /// Default: counters.
    pub strategy: Option<Strategy>,
    /// Whether the block strategy reserves its next block early (default: it does); given
    /// with another strategy, refused.
    pub prefetch: Option<bool>,
    /// The scope fields, in the order given (none: not given).
    pub scope: Vec<String>,
}

impl Spec {
    /// A sequence `name`, no option given.
    pub(crate) fn new(name: &str) -> Self {
        Spec {
            name: name.to_owned(),
            counters: None,
            layout: None,
            start: None,
            step: None,
            field: None,
            collection: None,
            counter_write_concern: None,
            strategy: None,
            prefetch: None,
            scope: Vec::new(),
        }
    }
}

/// The sequence `spec` names, made once for the process (see the module's notes), and
/// checked: an option out of range is [`ErrorKind::InvalidOption`], naming the sequence (kept
/// all the same: the error holds it); an option that differs from the declaring type's is
/// refused too ([`with_declarations`]).
///
/// Found by the options as given when they were given before, in one lookup, else made
/// and kept. A service names its sequences on every call
/// (`db.sequence("ticket").block(25).next()`), where making the sequence again and
/// finding it among the kept ones (its strings and itself hashed whole) was half of the
/// call's own work (BENCHMARKS.md, *Numbers on their own*).
pub(crate) fn sequence(spec: &Spec) -> Result<&'static Sequence, Error> {
    if let Some(&seq) = kept().resolved.get(spec) {
        return Ok(seq);
    }
    let given = interned(made(spec));
    check(given)?;
    if let (Some(prefetch), false) = (
        spec.prefetch,
        matches!(given.strategy, Strategy::Block { .. }),
    ) {
        return Err(Error::new(
            given,
            ErrorKind::InvalidOption {
                option: "prefetch",
                value: prefetch.to_string().into(),
                reason: "only the block strategy reserves a block ahead: give `.block(n)` \
                         with it, or leave it out"
                    .into(),
            },
        ));
    }
    let seq = with_declarations(spec, given)?;
    kept().resolved.insert(spec.clone(), seq);
    Ok(seq)
}

/// The sequence `spec` names, its strings kept for the process. What is not given is
/// the layout's tool's own (its counters collection, its first id).
fn made(spec: &Spec) -> Sequence {
    let layout = spec.layout.unwrap_or(Layout::TUTORIAL);
    let mut seq = BLANK;
    seq.name = string(&spec.name);
    seq.counters = spec.counters.as_deref().map_or(layout.counters, string);
    seq.layout = spec.step.map_or(layout, |step| stepped(layout, step));
    seq.strategy = spec.strategy.unwrap_or(Strategy::Counters);
    seq.counter_write_concern = spec.counter_write_concern.unwrap_or_default();
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
    let refused = |option, value: String, reason: &str| {
        Err(Error::new(
            seq,
            ErrorKind::InvalidOption {
                option,
                value: value.into(),
                reason: reason.into(),
            },
        ))
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
    if let Strategy::Block { block_size: 0, .. } = seq.strategy {
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

/// `given` (the sequence `spec` makes) as the program declares it: when types declare a
/// sequence of this name and counters collection (`named::declared`), the options the call
/// does not give are theirs, and one it gives that differs from theirs is refused
/// ([`ErrorKind::InvalidOption`], naming the type; [`ErrorKind::InvalidScope`] for the scope
/// fields). Where the declarations differ among themselves in an option the call does
/// not give, the call must give it. A call naming a collection whose field a declared
/// sequence of another name numbers is refused too: the name is then a slip. Without a
/// declaration, `given` as it is.
fn with_declarations(spec: &Spec, given: &'static Sequence) -> Result<&'static Sequence, Error> {
    let refused = |option: &'static str, value: String, reason: String| {
        Error::new(
            given,
            ErrorKind::InvalidOption {
                option,
                value: value.into(),
                reason: reason.into(),
            },
        )
    };
    if let Some(collection) = &spec.collection {
        let mut numbering = declared::numbering(collection, given.field);
        if let Some(other) = numbering.find(|other| other.seq.name != given.name) {
            return Err(refused(
                "collection",
                format!("{collection:?}"),
                format!(
                    "`{}` of `{collection}` is numbered by the sequence `{}`, which `{}` \
                     declares: name that sequence, or the collection this one numbers",
                    given.field, other.seq.name, other.type_name
                ),
            ));
        }
    }
    let counters = spec
        .counters
        .as_deref()
        .or(spec.layout.map(|layout| layout.counters));
    let declarations: Vec<Declaration> = declared::named(&spec.name)
        .iter()
        .filter(|declared| counters.is_none_or(|counters| declared.seq.counters == counters))
        .copied()
        .collect();
    let Some(first) = declarations.first() else {
        return Ok(given);
    };
    let mut seq = *given;
    // Each option: whether the call gave it, and the declarations' value of it, compared
    // as shown.
    let option = |name: &'static str,
                  given_value: Option<String>,
                  declared: fn(&Sequence) -> String|
     -> Result<bool, Error> {
        let theirs = declared(first.seq);
        if let Some(other) = declarations.iter().find(|d| declared(d.seq) != theirs)
            && given_value.is_none()
        {
            return Err(refused(
                name,
                "(not given)".into(),
                format!(
                    "`{}` declares the sequence with {name} = {theirs} and `{}` with \
                     {name} = {}, and a call by name that gives either still differs from \
                     the other: take the numbers through the type whose options it means \
                     (`{}::sequence().next(&db)`)",
                    first.type_name,
                    other.type_name,
                    declared(other.seq),
                    short(first.type_name),
                ),
            ));
        }
        match given_value {
            Some(value) => match declarations.iter().find(|d| declared(d.seq) != value) {
                Some(differs) => Err(refused(
                    name,
                    value,
                    format!(
                        "`{}` declares the sequence `{}` (counters `{}`) with {name} = {}, and a \
                         number on its own takes its declaring type's options: give {} or \
                         leave it out (`{}::sequence().next(&db)` takes the type's \
                         numbers with its options)",
                        differs.type_name,
                        differs.seq.name,
                        differs.seq.counters,
                        declared(differs.seq),
                        declared(differs.seq),
                        short(differs.type_name),
                    ),
                )),
                None => Ok(false),
            },
            // Taken from the declarations.
            None => Ok(true),
        }
    };
    if option("counters", counters.map(quoted), |seq| quoted(seq.counters))? {
        seq.counters = first.seq.counters;
    }
    let layout_given = spec.layout.map(|layout| layout.tool.to_owned());
    if option("layout", layout_given, |seq| seq.layout.tool.to_owned())? {
        seq.layout = stepped(first.seq.layout, 1);
    }
    let step_given = spec.step.map(|step| step.to_string());
    let step_taken = option("step", step_given, |seq| seq.layout.step.to_string())?;
    seq.layout.step = match step_taken {
        true => first.seq.layout.step,
        false => given.layout.step,
    };
    if option("start", spec.start.map(|start| start.to_string()), |seq| {
        seq.start.to_string()
    })? {
        seq.start = first.seq.start;
    }
    // `.block(n)` without `.prefetch(..)` leaves prefetch to the declaration.
    let strategy_given = spec
        .strategy
        .map(|given| match (given, first.seq.strategy) {
            (Strategy::Block { block_size, .. }, Strategy::Block { prefetch, .. })
                if spec.prefetch.is_none() =>
            {
                strategy(Strategy::Block {
                    block_size,
                    prefetch,
                })
            }
            _ => strategy(given),
        });
    let taken = option("strategy", strategy_given, |seq| strategy(seq.strategy))?;
    // The block size agrees (or the call was refused): prefetch is the declaration's too.
    let block_agrees = spec.prefetch.is_none() && matches!(seq.strategy, Strategy::Block { .. });
    if taken || block_agrees {
        seq.strategy = first.seq.strategy;
    }
    let concern = spec.counter_write_concern.map(|c| format!("{c:?}"));
    if option("counter_write_concern", concern, |seq| {
        format!("{:?}", seq.counter_write_concern)
    })? {
        seq.counter_write_concern = first.seq.counter_write_concern;
    }
    scope_as_declared(spec, given, &declarations)?;
    seq.scope = first.seq.scope;
    seq.scope_types = first.seq.scope_types;
    // Where the numbers are stored, for the missing-counter check: the declarations', where
    // they agree (two types may share a counter and number two collections).
    if spec.collection.is_none() && spec.field.is_none() {
        let place = |d: &Declaration| (d.seq.collection, d.seq.field);
        if declarations.iter().all(|d| place(d) == place(first)) {
            (seq.collection, seq.field) = place(first);
        }
    }
    // The declared sequence itself where the call adds nothing: one `&'static Sequence`.
    Ok(match declarations.iter().find(|d| *d.seq == seq) {
        Some(declared) => declared.seq,
        None => interned(seq),
    })
}

/// Refuses scope fields other than the declarations': none given where they count per
/// scope, fields given where they do not, or other fields.
fn scope_as_declared(
    spec: &Spec,
    given: &'static Sequence,
    declarations: &[Declaration],
) -> Result<(), Error> {
    let fields = |seq: &Sequence| seq.scope.join(", ");
    for declared in declarations {
        if declared.seq.scope == given.scope {
            continue;
        }
        let reason = match (declared.seq.scope, spec.scope.is_empty()) {
            (_, true) => format!(
                "`{}` declares the sequence per {}: name the scope with {}",
                declared.type_name,
                fields(declared.seq),
                declared
                    .seq
                    .scope
                    .iter()
                    .map(|field| format!(".scope({field:?}, value)"))
                    .collect::<String>()
            ),
            ([], false) => format!(
                "`{}` declares the sequence without a scope: call it without `.scope(...)`",
                declared.type_name
            ),
            (_, false) => format!(
                "`{}` declares the sequence per {}, in that order: give those fields",
                declared.type_name,
                fields(declared.seq)
            ),
        };
        return Err(Error::new(
            given,
            ErrorKind::InvalidScope {
                scope: match spec.scope.is_empty() {
                    true => "(none)".into(),
                    false => spec.scope.join(", ").into(),
                },
                reason: reason.into(),
            },
        ));
    }
    Ok(())
}

/// A strategy as the attribute and the setters say it.
fn strategy(strategy: Strategy) -> String {
    match strategy {
        Strategy::Counters => "counters".into(),
        Strategy::Block {
            block_size,
            prefetch: true,
        } => format!("block({block_size})"),
        Strategy::Block {
            block_size,
            prefetch: false,
        } => format!("block({block_size}) without prefetch"),
        Strategy::Gapless => "gapless".into(),
        Strategy::Optimistic { .. } => "optimistic".into(),
    }
}

fn quoted(value: &str) -> String {
    format!("{value:?}")
}

/// A type's name without its module path.
fn short(type_name: &str) -> &str {
    type_name.rsplit("::").next().unwrap_or(type_name)
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
            Err(error) => {
                let ErrorKind::InvalidOption { option, value, .. } = error.kind() else {
                    panic!("expected InvalidOption, got {error:?}");
                };
                assert_eq!(error.sequence().map(|seq| seq.name), Some(&*spec.name));
                (*option, value.to_string(), error.to_string())
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
        other.strategy = Some(Strategy::Block {
            block_size: 10,
            prefetch: true,
        });
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
        spec.layout = Some(Layout::MONGOOSE_AUTO_INCREMENT);
        let seq = sequence(&spec).unwrap();
        assert_eq!((seq.counters, seq.start), ("identitycounters", 0));
        spec.layout = Some(Layout::MONGOENGINE);
        spec.counters = Some("mine".into());
        spec.start = Some(10);
        let seq = sequence(&spec).unwrap();
        assert_eq!((seq.counters, seq.start), ("mine", 10));
        spec.step = Some(3);
        spec.layout = Some(Layout::TUTORIAL);
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
                |s| {
                    s.strategy = Some(Strategy::Block {
                        block_size: 0,
                        prefetch: true,
                    })
                },
                "block",
                "0",
                "a block holds at least one id",
            ),
            (|s| s.step = Some(0), "step", "0", "a step of 0"),
            (
                |s| {
                    s.layout = Some(Layout::MONGOENGINE);
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
                    s.layout = Some(Layout::GO);
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
