//! Items in a stored document's array, one subsystem: an append's commands and what their
//! answers mean ([`commands`]), its rounds until it lands, is refused or gives up, with the
//! turns the appends of this process take per array ([`rounds`]). The orchestration
//! (`insert::items`) checks the items, runs the rounds in the call's context and writes the
//! numbers back; an item type and its numbering are the schema's (`schema::item`), the
//! arrays a document is inserted with the document's own fields (`fields::items`).

pub(crate) mod commands;
pub(crate) mod rounds;
