//! The ids a document carries beside its sequence id: the `_id` an insert fills
//! ([`Model::object_id_mut`]: an `Option<ObjectId>` beside a field sequence), the ids of
//! its other sequences ([`Model::OTHERS`]) and the display codes written from them
//! ([`Model::DISPLAYS`]), and the numbers of its items ([`Model::ITEMS`], numbered in
//! memory when the guard is made). They follow the sequence id: when the insert
//! ends, or its caller goes away, a document whose sequence id is unset (known not stored,
//! or never sent) gets them back unset too, so that a document's ids are unset together or
//! kept together, whatever path the insert took.
//!
//! A guard is made once the document's ids are checked (an id the caller set is refused
//! before, and never reaches it): every other sequence's id it finds set on the way out was
//! filled by seqid, in this call or in the insert a resume finishes. An `_id` the caller
//! set is never changed; one this call filled is unset.

use mongodb::bson::oid::ObjectId;

use crate::fields::code;
use crate::fields::items;
use crate::schema::id::IdField;
use crate::schema::model::Model;

/// The guard of one document's companion ids. A flag, not [`CompanionsOfMany`]'s list: a
/// single insert allocates nothing for it.
pub(crate) struct Companions<'d, T: Model> {
    doc: &'d mut T,
    /// Whether this call filled the `_id`.
    object_id: bool,
}

impl<'d, T: Model> Companions<'d, T> {
    /// Fills the `_id` of `doc` with a new `ObjectId` if it is unset (nothing for a model
    /// without one).
    pub(crate) fn fill(doc: &'d mut T) -> Self {
        let object_id = fill_object_id(doc);
        items::number_at_insert(doc);
        Companions { doc, object_id }
    }

    /// The document, to insert it.
    pub(crate) fn doc(&mut self) -> &mut T {
        self.doc
    }

    /// Whether this insert filled the `_id`: then no other writer can store a document
    /// equal to it (an `ObjectId` is unique to the process and moment that made it), so a
    /// document equal to it, found at its id, is its own
    /// ([`Sending::content_is_unique`](crate::base::fate::Sending::content_is_unique)).
    pub(crate) fn made_content_unique(&self) -> bool {
        self.object_id
    }
}

impl<T: Model> Drop for Companions<'_, T> {
    fn drop(&mut self) {
        follow(self.doc, self.object_id);
    }
}

/// [`Companions`] for the documents of an `insert_many`.
pub(crate) struct CompanionsOfMany<'d, T: Model> {
    docs: &'d mut [T],
    /// The positions whose `_id` this insert filled.
    object_ids: Vec<usize>,
}

impl<'d, T: Model> CompanionsOfMany<'d, T> {
    /// Fills the unset `_id`s of `docs` with new `ObjectId`s (none for a model without
    /// one, at no cost).
    pub(crate) fn fill(docs: &'d mut [T]) -> Self {
        let object_ids = (0..docs.len())
            .filter(|&position| fill_object_id(&mut docs[position]))
            .collect();
        if !T::ITEMS.is_empty() {
            docs.iter_mut().for_each(items::number_at_insert);
        }
        CompanionsOfMany { docs, object_ids }
    }

    /// The documents, to insert them.
    pub(crate) fn docs(&mut self) -> &mut [T] {
        self.docs
    }

    /// Whether this insert filled the `_id` of every document (see
    /// [`Companions::made_content_unique`]).
    pub(crate) fn made_content_unique(&self) -> bool {
        !self.object_ids.is_empty() && self.object_ids.len() == self.docs.len()
    }
}

impl<T: Model> Drop for CompanionsOfMany<'_, T> {
    fn drop(&mut self) {
        if self.object_ids.is_empty()
            && T::OTHERS.is_empty()
            && T::DISPLAYS.is_empty()
            && T::ITEMS.is_empty()
        {
            return;
        }
        let mut filled = self.object_ids.iter().peekable();
        for (position, doc) in self.docs.iter_mut().enumerate() {
            let object_id = filled.next_if(|&&p| p == position).is_some();
            follow(doc, object_id);
        }
    }
}

/// Fills the `_id` of `doc` with a new `ObjectId` if the model has one and it is unset;
/// whether it did.
fn fill_object_id<T: Model>(doc: &mut T) -> bool {
    doc.object_id_mut()
        .filter(|slot| slot.is_none())
        .map(|slot| slot.insert(ObjectId::new()))
        .is_some()
}

/// If the sequence id of `doc` is unset: its other sequences' ids too, its display codes
/// (written from the ids), and its `_id` if this call filled it (`object_id`).
fn follow<T: Model>(doc: &mut T, object_id: bool) {
    if !doc.sequence_id().is_unset() {
        return;
    }
    if object_id && let Some(slot) = doc.object_id_mut() {
        *slot = None;
    }
    for index in 0..T::OTHERS.len() {
        if let Some(field) = doc.other_id_mut(index) {
            field.unset();
        }
    }
    code::clear(doc);
    items::unset(doc);
}
