//! A document's own fields, as one insert reads and fills them: its ids (unset, filled,
//! carried to a resume), its display codes, its companions (the other sequences' ids and
//! an `ObjectId` the insert makes), the numbers of its items, its scope and its natural
//! key, read from the document without serializing the rest where they can be.

pub(crate) mod code;
pub(crate) mod companions;
pub(crate) mod ids;
pub(crate) mod items;
pub(crate) mod natural;
pub(crate) mod picked;
pub(crate) mod scope;
