//! The commands of a replace of a stored document (`doc.replace(&db)`) and what their
//! answers mean: for a type with items, a read of what the replace must not lose
//! ([`read`]: each array's mark and hidden list of recent appends) and a `replace_one`
//! conditioned on the marks as read, the lists kept in it ([`conditional`]); for a type
//! without, a `replace_one` by `_id` alone ([`by_id`]). No update pipeline: servers
//! without them (nx-27017) take these.

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::{ClientSession, Collection};

use crate::base::server::PRIMARY;
use crate::schema::item::ItemsField;

/// What the read found of each array of the stored document, in the order of the arrays:
/// its mark and its hidden list of recent appends, each as stored (`Null` where missing).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Guards {
    pub marks: Vec<Bson>,
    pub appends: Vec<Bson>,
}

impl Guards {
    /// The filter that finds the document at `id` only while every mark is as read (by
    /// value; `null` matches a mark still missing). Not on the hidden lists: nx-27017
    /// refuses an array in a filter ("type 'list' is not supported"), and every append that
    /// numbers an item moves its mark; one of no item that lands in between leaves its
    /// token out of the list kept, which costs nothing: sent again, it appends nothing.
    fn filter(&self, id: &Bson, specs: &[ItemsField]) -> BsonDocument {
        let mut filter = doc! { "_id": id.clone() };
        for (spec, mark) in specs.iter().zip(&self.marks) {
            filter.insert(spec.last, mark.clone());
        }
        filter
    }

    /// `document` with the hidden lists as read, so that the replace keeps them (a list
    /// still missing stays missing).
    pub(crate) fn keep_appends(&self, document: &mut BsonDocument, specs: &[ItemsField]) {
        for (spec, appends) in specs.iter().zip(&self.appends) {
            match appends {
                Bson::Null => document.remove(spec.appends()),
                list => document.insert(spec.appends(), list.clone()),
            };
        }
    }
}

/// Reads the marks and hidden lists of the document at `id`, from the primary; `None` if
/// there is none.
pub(crate) async fn read(
    coll: &Collection<BsonDocument>,
    id: &Bson,
    specs: &[ItemsField],
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<Option<Guards>> {
    let mut projection = doc! { "_id": 1 };
    for spec in specs {
        projection.insert(spec.last, 1);
        projection.insert(spec.appends(), 1);
    }
    let action = coll
        .find_one(doc! { "_id": id.clone() })
        .projection(projection)
        .selection_criteria(PRIMARY);
    let found = match session {
        Some(session) => action.session(session).await?,
        None => action.await?,
    };
    Ok(found.map(|stored| {
        let field = |key: &str| stored.get(key).cloned().unwrap_or(Bson::Null);
        Guards {
            marks: specs.iter().map(|spec| field(spec.last)).collect(),
            appends: specs.iter().map(|spec| field(&spec.appends())).collect(),
        }
    }))
}

/// Replaces the document at `id` by `replacement` where every mark is as `read` saw it.
/// Whether it matched (`false`: a mark moved on, or the document is gone).
pub(crate) async fn conditional(
    coll: &Collection<BsonDocument>,
    id: &Bson,
    specs: &[ItemsField],
    read: &Guards,
    replacement: &BsonDocument,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<bool> {
    replace(coll, read.filter(id, specs), replacement, session).await
}

/// Replaces the document at `id` by `replacement`. Whether it matched one.
pub(crate) async fn by_id(
    coll: &Collection<BsonDocument>,
    id: &Bson,
    replacement: &BsonDocument,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<bool> {
    replace(coll, doc! { "_id": id.clone() }, replacement, session).await
}

async fn replace(
    coll: &Collection<BsonDocument>,
    filter: BsonDocument,
    replacement: &BsonDocument,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<bool> {
    let action = coll.replace_one(filter, replacement);
    let result = match session {
        Some(session) => action.session(session).await?,
        None => action.await?,
    };
    Ok(result.matched_count == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::item::testing::LINES;

    #[test]
    fn the_guards_condition_the_replace_and_are_kept_in_it() {
        let list = Bson::Array(vec![Bson::Document(doc! { "token": 1, "last": 3 })]);
        let guards = Guards {
            marks: vec![Bson::Int32(3)],
            appends: vec![list.clone()],
        };
        assert_eq!(
            guards.filter(&Bson::Int64(7), &[LINES]),
            doc! { "_id": 7_i64, "lines_last": 3 }
        );
        let mut document = doc! { "_id": 7_i64, "lines": [], "lines_last": 3 };
        guards.keep_appends(&mut document, &[LINES]);
        assert_eq!(document.get("_seqid_lines_appends"), Some(&list));
        let none = Guards {
            marks: vec![Bson::Null],
            appends: vec![Bson::Null],
        };
        none.keep_appends(&mut document, &[LINES]);
        assert!(!document.contains_key("_seqid_lines_appends"));
    }
}
