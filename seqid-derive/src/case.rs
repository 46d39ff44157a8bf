//! Name conversions: serde's `rename_all` rules for fields, and the default collection name.

/// A `#[serde(rename_all = "...")]` rule, as serde_derive applies it to field names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    /// The rule named `s`, or `None` for a name serde rejects (serde reports it, not us).
    pub fn from_str(s: &str) -> Option<Self> {
        Some(match s {
            "lowercase" => Self::Lower,
            "UPPERCASE" => Self::Upper,
            "PascalCase" => Self::Pascal,
            "camelCase" => Self::Camel,
            "snake_case" => Self::Snake,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnake,
            "kebab-case" => Self::Kebab,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebab,
            _ => return None,
        })
    }

    /// The serialized name of a field called `field` (a snake_case Rust name).
    /// Mirrors serde_derive, so that `_id` under `camelCase` becomes `id` here too.
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            Self::Lower | Self::Snake => field.to_owned(),
            Self::Upper | Self::ScreamingSnake => field.to_ascii_uppercase(),
            Self::Pascal => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            Self::Camel => {
                let pascal = Self::Pascal.apply_to_field(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => pascal,
                }
            }
            Self::Kebab => field.replace('_', "-"),
            Self::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

/// `BlogPost` -> `blog_post`, `HTTPServer` -> `http_server`: the default collection name.
/// A run of capitals is one word, ended by the capital that starts a lowercase word.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut snake = String::with_capacity(name.len() + 4);
    for (i, &ch) in chars.iter().enumerate() {
        if ch.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let boundary = prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && next_is_lower);
            if boundary && prev != '_' {
                snake.push('_');
            }
        }
        snake.extend(ch.to_lowercase());
    }
    snake
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake() {
        assert_eq!(snake_case("User"), "user");
        assert_eq!(snake_case("BlogPost"), "blog_post");
        assert_eq!(snake_case("HTTPServer"), "http_server");
        assert_eq!(snake_case("Order2Line"), "order2_line");
        assert_eq!(snake_case("already_snake"), "already_snake");
        assert_eq!(snake_case("Two_Words"), "two_words");
    }

    #[test]
    fn rule_names() {
        for name in [
            "lowercase",
            "UPPERCASE",
            "PascalCase",
            "camelCase",
            "snake_case",
            "SCREAMING_SNAKE_CASE",
            "kebab-case",
            "SCREAMING-KEBAB-CASE",
        ] {
            assert!(RenameRule::from_str(name).is_some(), "{name}");
        }
        assert_eq!(RenameRule::from_str("Pascal"), None);
    }

    #[test]
    fn id_under_rename_all() {
        let id = |rule: RenameRule| rule.apply_to_field("_id");
        assert_eq!(id(RenameRule::Snake), "_id");
        assert_eq!(id(RenameRule::Lower), "_id");
        assert_eq!(id(RenameRule::Camel), "id");
        assert_eq!(id(RenameRule::Pascal), "Id");
        assert_eq!(id(RenameRule::Upper), "_ID");
        assert_eq!(id(RenameRule::Kebab), "-id");
    }
}
