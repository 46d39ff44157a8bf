//! The id sources, one per strategy: they hand out ids per scope and take back what became
//! of them (stored, refused, a race lost, an answer lost). The insert orchestration
//! ([`crate::insert`]) calls them; they call the round trips below.

pub(crate) mod counted;
pub(crate) mod optimistic;
pub(crate) mod others;
