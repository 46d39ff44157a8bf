//! Display codes (issue 27): the formats the derive accepts, and the code each writes
//! from a document's fields (`Model::write_code`, what `insert` stores).
use mongodb::bson::oid::ObjectId;
use seqid::{Model, newtype_id};
use serde::Serialize;

/// The invoice: numbered per year, the code `INV-<year>-<number, 4 digits>`.
#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{year}-{number:04}")]
    code: String,
}

/// The code of `DISPLAYS[index]` that `doc` writes.
fn code<T: Model>(doc: &T, index: usize) -> String {
    let mut code = String::new();
    doc.write_code(index, &mut code).unwrap();
    code
}

#[test]
fn the_invoice_code_is_padded_and_never_cut() {
    let invoice = |year, number| Invoice {
        year,
        number,
        code: String::new(),
    };
    assert_eq!(code(&invoice(2026, 42), 0), "INV-2026-0042");
    assert_eq!(code(&invoice(2026, 123_456), 0), "INV-2026-123456");
    assert_eq!(code(&invoice(-44, 1), 0), "INV--44-0001");
    let display = Invoice::DISPLAYS[0];
    assert_eq!(display.field, "code");
    assert_eq!(display.format, "INV-{year}-{number:04}");
    assert_eq!(display.sequence, &Invoice::SEQUENCE);
}

/// A ticket's number.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
struct TicketNo(i64);
newtype_id!(TicketNo(i64));

/// Accepted shapes: the `_id` sequence by its Rust name, a newtype id, an `Option` id,
/// escaped braces, text that is not ASCII, another integer field, a string at the end
/// (it takes the rest of the code: any value), a renamed display field.
#[derive(Serialize, seqid::Document)]
#[seq_id("ticket_id", collection = "tickets")]
struct Ticket {
    #[serde(rename = "_id")]
    id: Option<u64>,
    queue: String,
    #[seq_id("ticket_number", scope = "queue", strategy = "block")]
    number: TicketNo,
    copies: u8,
    #[seq_display("№{id}")]
    #[serde(rename = "label")]
    reference: String,
    #[seq_display("{{{number:03}}} x{copies}/{queue}")]
    code: String,
}

#[test]
fn codes_show_ids_of_any_type_escapes_and_strings() {
    let ticket = Ticket {
        id: Some(7),
        queue: "support/EU-west".into(),
        number: TicketNo(9),
        copies: 2,
        reference: String::new(),
        code: String::new(),
    };
    assert_eq!(code(&ticket, 0), "№7");
    assert_eq!(code(&ticket, 1), "{009} x2/support/EU-west");
    let fields: Vec<&str> = Ticket::DISPLAYS.iter().map(|d| d.field).collect();
    assert_eq!(fields, ["label", "code"]);
    assert_eq!(Ticket::DISPLAYS[0].sequence.name, "ticket_id");
    assert_eq!(Ticket::DISPLAYS[1].sequence.name, "ticket_number");
    // `{queue}` ends the code: any value can be shown, none to check.
    assert!(!Ticket::DISPLAYS[1].checks_values);
    // A number not filled yet writes nothing: the insert writes the code once it is.
    let unset = Ticket {
        id: None,
        number: TicketNo(0),
        ..ticket
    };
    assert_eq!(code(&unset, 0), "№");
}

/// A string followed by text is ended by that text's first character, which its values
/// must not hold: refused by `write_code`, which the insert calls before taking an id.
#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "orders")]
struct Order {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    shop: String,
    #[seq_id("order", scope = "shop", strategy = "optimistic")]
    number: i64,
    #[seq_display("{shop}-{number}")]
    code: String,
}

#[test]
fn a_string_followed_by_text_may_not_hold_its_first_character() {
    let order = |shop: &str| Order {
        id: None,
        shop: shop.into(),
        number: 3,
        code: String::new(),
    };
    assert_eq!(code(&order("north_east"), 0), "north_east-3");
    let refused = order("north-east")
        .write_code(0, &mut String::new())
        .unwrap_err();
    assert_eq!(refused.placeholder, "shop");
    assert_eq!(refused.value, "north-east");
    assert_eq!(refused.separator, '-');
    assert!(Order::DISPLAYS[0].checks_values);
}

/// Without a display field, nothing changes: no `DISPLAYS`, no code written.
#[derive(Serialize, seqid::Document)]
#[seq_id("plain")]
struct Plain {
    _id: i64,
}

#[test]
fn a_model_without_a_display_field_has_none() {
    assert!(Plain::DISPLAYS.is_empty());
    assert!(Plain { _id: 1 }.display_field(0).is_none());
}

/// Raw identifiers: placeholders name fields without `r#`, and the finder is named after
/// the field the same way.
#[derive(Serialize, serde::Deserialize, seqid::Document)]
#[seq_id(collection = "matches")]
struct Match {
    r#type: String,
    #[seq_id("match", scope = "type")]
    r#match: i64,
    #[seq_display("{type}:{match:02}")]
    r#ref: String,
}

/// Compiled, never run: the finder of `r#ref`.
async fn find_a_match(db: mongodb::Database) -> Result<Option<Match>, seqid::Error> {
    Match::find_by_ref(&db, "league:03").await
}

#[test]
fn raw_identifiers_are_named_without_their_prefix() {
    let game = Match {
        r#type: "league".into(),
        r#match: 3,
        r#ref: String::new(),
    };
    assert_eq!(code(&game, 0), "league:03");
    assert_eq!(Match::DISPLAYS[0].field, "ref");
    assert!(
        Match::DISPLAYS[0].checks_values,
        "`{{type}}` is followed by `:`"
    );
}
