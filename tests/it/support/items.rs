//! The models of the items tests (`tests/it/items.rs`), shared with the worker processes'
//! `items/<via>/<docs>` mode (`tests/bin/worker.rs`): an order whose lines and steps are
//! items numbered inside it.

use seqid::{Document, Item};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Item)]
pub struct Line {
    #[seq_no]
    pub no: i64,
    pub sku: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Item)]
pub struct Step {
    #[seq_no(start = 10, step = 5)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    pub what: String,
}

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("order", collection = "orders")]
pub struct Order {
    #[serde(rename = "_id")]
    pub id: i64,
    #[seq_items(last = "lines_last")]
    pub lines: Vec<Line>,
    pub lines_last: i64,
    #[seq_items(last = "steps_last")]
    pub steps: Vec<Step>,
    pub steps_last: i32,
}

pub fn line(sku: &str) -> Line {
    Line {
        no: 0,
        sku: sku.into(),
    }
}

pub fn step(what: &str) -> Step {
    Step {
        n: None,
        what: what.into(),
    }
}

pub fn order(lines: usize) -> Order {
    Order {
        id: 0,
        lines: (0..lines).map(|_| line("same")).collect(),
        lines_last: 0,
        steps: Vec::new(),
        steps_last: 0,
    }
}

/// Appends `per_task` lines, one per call, from each of `tasks` tasks, to the `docs`
/// orders from `_id: first` (task `t`'s `n`-th to order `first + (t + n) % docs`), all of
/// equal content; returns `(order, number, task, n)` for each number answered.
pub async fn append_from_tasks(
    db: seqid::Database,
    first: i64,
    docs: i64,
    tasks: usize,
    per_task: usize,
) -> Result<Vec<(i64, i64, usize, usize)>, seqid::Error> {
    let mut appenders = tokio::task::JoinSet::new();
    for task in 0..tasks {
        let db = db.clone();
        appenders.spawn(async move {
            let mut got = Vec::new();
            for n in 0..per_task {
                let id = first + (task + n) as i64 % docs;
                let mut lines = vec![line("same")];
                let filter = mongodb::bson::doc! { "_id": id };
                for number in Order::append_lines(&db, filter, &mut lines).await? {
                    got.push((id, number, task, n));
                }
            }
            Ok::<_, seqid::Error>(got)
        });
    }
    let mut all = Vec::new();
    while let Some(got) = appenders.join_next().await {
        all.extend(got.expect("an appender panicked")?);
    }
    Ok(all)
}
