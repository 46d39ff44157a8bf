//! An `ObjectId` where a sequence would put its number: refused at the field's type, with
//! what to write instead (`IdField`'s own message would suggest a newtype, which an
//! ObjectId cannot become). The type is recognised as written: a path ending in
//! `ObjectId`, alone or in an `Option`.

use syn::ext::IdentExt;

use crate::ast::Container;
use crate::ctxt::Ctxt;
use crate::declaration::{Declared, name_or_placeholder};
use crate::types::is_object_id;

/// Reports, at its type, the field `declared` fills if that field is an ObjectId.
pub fn check(cx: &Ctxt, cont: &Container, declared: &Declared) {
    let Some(field) = declared.field else { return };
    if !is_object_id(field.ty) {
        return;
    }
    let message = if declared.on_id {
        let attr = declared.attr;
        let more = match attr.keys.iter().any(|key| key.unraw() != "collection") {
            true => ", ...",
            false => "",
        };
        format!(
            "`_id` is an ObjectId, which a sequence cannot fill: keep the ObjectId `_id` and \
             put the sequence on an integer field, `#[seq_id({name}{more})] number: i64`, \
             with `#[seq_id(collection = {collection:?})]` on the struct; or make `_id` an \
             integer (`i64`)",
            name = name_or_placeholder(attr),
            collection = cont.collection().value(),
        )
    } else {
        format!(
            "a sequence fills an integer field (`i64`, `i32`, `u32`, `u64`, an `Option` of one, \
             or a `seqid::newtype_id!` type); `{}` is an ObjectId",
            field.ident.unraw()
        )
    };
    cx.error_spanned_by(field.ty, message);
}
