//! Per-call options that override what the attribute declares.

/// Options for one call of [`Document::insert_with`](crate::Document::insert_with) or
/// [`Document::insert_many_with`](crate::Document::insert_many_with).
///
/// ```
/// use seqid::InsertOptions;
///
/// let options = InsertOptions::new().max_attempts(4);
/// assert_eq!(options.max_attempts, Some(4));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InsertOptions {
    /// Attempts the optimistic loop makes before giving up; overrides `max_attempts`
    /// in the attribute. Must be at least 1. Other strategies ignore it.
    pub max_attempts: Option<u32>,
}

impl InsertOptions {
    /// No overrides: everything as the attribute says.
    ///
    /// ```
    /// assert_eq!(seqid::InsertOptions::new(), seqid::InsertOptions::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`InsertOptions::max_attempts`].
    ///
    /// ```
    /// let options = seqid::InsertOptions::new().max_attempts(2);
    /// assert_eq!(options.max_attempts, Some(2));
    /// ```
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = Some(attempts);
        self
    }
}
