// One action serves one document and many (`MANY`), and finds by number and by code
// (`BY_CODE`); a setter of one shape is not offered on the other: a reserved id is for one
// document, an order for many drafts, a scope for a find by number.
use mongodb::bson::doc;
use seqid::Document;

#[derive(serde::Serialize, serde::Deserialize, Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<mongodb::bson::oid::ObjectId>,
    year: i32,
    #[seq_id("invoice", scope = "year", numbered = "later")]
    number: Option<i64>,
    #[seq_display("INV-{year}-{number:04}")]
    code: String,
}

#[derive(serde::Serialize, Document)]
#[seq_id("order", collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
}

async fn shapes(db: seqid::Database, mut orders: Vec<Order>) -> Result<(), seqid::Error> {
    let token = Order::reserve_id(&db).await?;
    Order::insert_many(&mut orders, &db).reserved(token).await?;
    Invoice::number_draft(&db, doc! {}).order(doc! { "year": 1 }).await?;
    Invoice::find_by_code(&db, "INV-2026-0001").scope(2026).await?;
    Ok(())
}

fn main() {}
