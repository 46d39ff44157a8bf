//! (in progress)
use mongodb::Database;
use crate::{Document, Error, IdValue, InsertOptions};

pub(crate) async fn one<T: Document>(_doc: &mut T, _db: &Database, _options: InsertOptions) -> Result<IdValue<T>, Error> {
    todo!()
}

pub(crate) async fn many<T: Document>(_docs: &mut [T], _db: &Database, _options: InsertOptions) -> Result<Vec<IdValue<T>>, Error> {
    todo!()
}
