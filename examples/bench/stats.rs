//! Medians and Markdown tables.

/// The median (mean of the middle two for an even count); NaN for none.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// The value at quantile `q` (0..=1) of `sorted`, by nearest rank; NaN for none.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .copied()
        .filter(|x| !x.is_nan())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        })
}

/// `0.97 (0.91–1.02)`: the median and the range over rounds.
pub fn ratio_cell(values: &[f64]) -> String {
    if values.is_empty() {
        return "–".into();
    }
    let (lo, hi) = min_max(values);
    format!("{:.2} ({lo:.2}–{hi:.2})", median(values))
}

/// A target `at least` a ratio: `yes`, or how far it is from being met.
pub fn verdict(value: f64, at_least: f64) -> String {
    if value >= at_least {
        format!("yes (+{:.2})", value - at_least)
    } else {
        format!("**no** (short by {:.2})", at_least - value)
    }
}

/// A Markdown table.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn print(&self) {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|i| {
                self.rows
                    .iter()
                    .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                    .chain([self.header[i].chars().count()])
                    .max()
                    .unwrap_or(0)
                    .max(3)
            })
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(c, &w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
                .collect();
            println!("| {} |", padded.join(" | "));
        };
        line(&self.header);
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        println!("| {} |", rule.join(" | "));
        for row in &self.rows {
            line(row);
        }
        println!();
    }
}
