//! (in progress)
/// Live block.
pub struct LiveBlock;
