//! The names that some keys of `#[seq_id]` choose among (`strategy`, `counter_write_concern`,
//! `layout`, `numbered`, `counter_holds`), and what the derive knows of each.

/// The `strategy = "..."` names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StrategyKind {
    Counters,
    Optimistic,
    Block,
    Gapless,
}

impl StrategyKind {
    pub const ALL: [StrategyKind; 4] =
        [Self::Counters, Self::Optimistic, Self::Block, Self::Gapless];

    pub fn name(self) -> &'static str {
        match self {
            Self::Counters => "counters",
            Self::Optimistic => "optimistic",
            Self::Block => "block",
            Self::Gapless => "gapless",
        }
    }
}

/// The `counter_write_concern = "..."` values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CounterWrite {
    Majority,
    Database,
}

impl CounterWrite {
    pub const ALL: [CounterWrite; 2] = [Self::Majority, Self::Database];

    pub fn name(self) -> &'static str {
        match self {
            Self::Majority => "majority",
            Self::Database => "database",
        }
    }
}

/// The `layout = "..."` presets: the tools whose counters seqid shares, and what the
/// derive checks against each (the layouts themselves are the runtime's `Layout`
/// constants).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LayoutKind {
    Tutorial,
    MongoEngine,
    MongooseSequence,
    MongooseAutoIncrement,
    Typegoose,
    Go,
}

impl LayoutKind {
    pub const ALL: [LayoutKind; 6] = [
        Self::Tutorial,
        Self::MongoEngine,
        Self::MongooseSequence,
        Self::MongooseAutoIncrement,
        Self::Typegoose,
        Self::Go,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Tutorial => "tutorial",
            Self::MongoEngine => "mongoengine",
            Self::MongooseSequence => "mongoose-sequence",
            Self::MongooseAutoIncrement => "mongoose-auto-increment",
            Self::Typegoose => "typegoose",
            Self::Go => "go",
        }
    }

    /// The tool, for messages.
    pub fn tool(self) -> &'static str {
        match self {
            Self::Tutorial => "the MongoDB tutorial's layout",
            Self::MongoEngine => "MongoEngine's SequenceField",
            Self::MongooseSequence => "mongoose-sequence",
            Self::MongooseAutoIncrement => "mongoose-auto-increment",
            Self::Typegoose => "@typegoose/auto-increment",
            Self::Go => "the Go blog post's layout",
        }
    }

    /// The runtime's `Layout` constant.
    pub fn constant(self) -> &'static str {
        match self {
            Self::Tutorial => "TUTORIAL",
            Self::MongoEngine => "MONGOENGINE",
            Self::MongooseSequence => "MONGOOSE_SEQUENCE",
            Self::MongooseAutoIncrement => "MONGOOSE_AUTO_INCREMENT",
            Self::Typegoose => "TYPEGOOSE",
            Self::Go => "GO",
        }
    }

    /// Whether the tool hands out 0 first unless told otherwise (its `startAt`), which a
    /// plain integer field cannot hold. The first id itself, and the tool's counters
    /// collection, are the runtime's `Layout` constant's (`first_id`, `counters`), which
    /// the expansion names; this is what the compile-time check needs of it.
    pub fn counts_from_zero(self) -> bool {
        matches!(self, Self::MongooseAutoIncrement | Self::Typegoose)
    }

    /// Why the tool's counter cannot hold a scope, if it cannot.
    pub fn without_scope(self) -> Option<&'static str> {
        match self {
            Self::Tutorial | Self::MongooseSequence => None,
            Self::MongoEngine => {
                Some("finds its counter by `_id: \"<collection>.<field>\"` alone, with no scope")
            }
            Self::MongooseAutoIncrement => {
                Some("finds its counter by `model` and `field` alone, with no scope")
            }
            Self::Typegoose => {
                Some("finds its counter by `modelName` and `field` alone, with no scope")
            }
            Self::Go => Some("finds its counter by `_id` alone, with no scope"),
        }
    }

    /// Why the tool's ids cannot be a step apart, if they cannot.
    pub fn without_step(self) -> Option<&'static str> {
        match self {
            Self::MongoEngine => Some("always adds 1 to its counter (`$inc: { next: 1 }`)"),
            Self::Go => Some("adds 1 per id (`$inc: { sequence: 1 }`)"),
            _ => None,
        }
    }
}

/// The `numbered = "..."` values: when the sequence's number is taken.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NumberedKind {
    /// By `insert`, the default.
    Insert,
    /// By `number_draft`, when a stored draft is issued.
    Later,
}

/// The `counter_holds = "..."` values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum HoldsKind {
    Last,
    Next,
}
