//! The field a mistyped name most likely meant, for the "did you mean" of every message
//! about a name the user wrote that no field has (`last = ...`, `scope = ...`, a display
//! placeholder), as rustc hints at the names it knows.

use syn::ext::IdentExt;

use crate::ast::Field;

/// The Rust name of the field among `fields` that `written` is most likely a typo of: one
/// equal to it but for case, else the nearest by edit distance (the first of those as near),
/// if at most `max(1, len / 3)` edits away, rustc's threshold for its own hints, so that a
/// name is not matched with any short one.
pub fn field_name<'f>(
    written: &str,
    fields: impl IntoIterator<Item = &'f Field<'f>>,
) -> Option<String> {
    let names: Vec<String> = fields
        .into_iter()
        .map(|field| field.ident.unraw().to_string())
        .collect();
    closest(written, &names).map(str::to_owned)
}

fn closest<'n>(written: &str, names: &'n [String]) -> Option<&'n str> {
    if let Some(name) = names.iter().find(|name| name.eq_ignore_ascii_case(written)) {
        return Some(name);
    }
    let most = (written.chars().count() / 3).max(1);
    names
        .iter()
        .map(|name| (strsim::levenshtein(written, name), name))
        .filter(|&(distance, _)| distance <= most)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, name)| name.as_str())
}

#[cfg(test)]
mod tests {
    use super::closest;

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn a_near_name_is_found_and_a_far_one_is_not() {
        let fields = names(&["id", "lines", "lines_last", "project", "year"]);
        for (written, meant) in [
            ("line_last", Some("lines_last")),
            ("linesLast", Some("lines_last")),
            ("projet", Some("project")),
            ("yeer", Some("year")),
            ("Year", Some("year")),
            ("YEAR", Some("year")),
            // One edit at most in a name of up to 5 characters.
            ("yr", None),
            ("tenant", None),
            ("count", None),
        ] {
            assert_eq!(closest(written, &fields), meant, "{written}");
        }
    }

    #[test]
    fn a_name_equal_but_for_case_wins_over_a_nearer_one() {
        // `YEARS` is 1 edit from `YEAR`, `year` 4.
        let fields = names(&["YEARS", "year"]);
        assert_eq!(closest("YEAR", &fields), Some("year"));
        // Both 1 edit away, `lines_` first.
        let fields = names(&["lines_", "Lines"]);
        assert_eq!(closest("lines", &fields), Some("Lines"));
    }

    #[test]
    fn of_names_as_near_the_first_is_chosen() {
        let fields = names(&["year", "bear"]);
        assert_eq!(closest("xear", &fields), Some("year"));
    }
}
