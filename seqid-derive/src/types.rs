//! What a field's type is, as far as the derive can tell: it sees the type as written,
//! before names are resolved, so each test reads the path's last segment (`Option`,
//! `ObjectId`, `String`, `i64`), whatever path leads to it.

use syn::{GenericArgument, PathArguments, PathSegment, Type};

/// Whether `ty` is written `Option<...>` (a path ending in `Option`).
pub fn is_option(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "Option"),
        Type::Group(group) => is_option(&group.elem),
        Type::Paren(paren) => is_option(&paren.elem),
        _ => false,
    }
}

/// Whether `ty` is written `ObjectId` or `Option<ObjectId>` (any path to either).
pub fn is_object_id(ty: &Type) -> bool {
    is_plain_object_id(ty) || is_option_of_object_id(ty)
}

/// Whether `ty` is written `Option<ObjectId>` (any path to either).
pub fn is_option_of_object_id(ty: &Type) -> bool {
    option_argument(ty).is_some_and(is_plain_object_id)
}

fn is_plain_object_id(ty: &Type) -> bool {
    last_segment(ty)
        .is_some_and(|segment| segment.ident == "ObjectId" && segment.arguments.is_none())
}

/// The last segment of a type written as a path (`a::b::C<T>`: `C<T>`).
fn last_segment(ty: &Type) -> Option<&PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

/// Whether `ty` is written `String` (any path to it).
pub fn is_string(ty: &Type) -> bool {
    simple_name(ty).is_some_and(|name| name == "String")
}

/// Whether `ty` is written as a primitive integer.
pub fn is_integer(ty: &Type) -> bool {
    const INTEGERS: [&str; 12] = [
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    ];
    simple_name(ty).is_some_and(|name| INTEGERS.contains(&name.as_str()))
}

/// The last segment of a path type without arguments, if `ty` is one (read as written:
/// not inside parentheses or an invisible group, as [`last_segment`] reads).
fn simple_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            last.arguments.is_none().then(|| last.ident.to_string())
        }
        _ => None,
    }
}

/// The integer a number field holds, if `ty` is written `i32`, `i64`, `u32`, `u64` or an
/// `Option` of one: its name.
pub fn number_type(ty: &Type) -> Option<String> {
    const NUMBERS: [&str; 4] = ["i32", "i64", "u32", "u64"];
    let plain = |ty: &Type| simple_name(ty).filter(|name| NUMBERS.contains(&name.as_str()));
    if let Some(name) = plain(ty) {
        return Some(name);
    }
    plain(option_argument(ty)?)
}

/// A type written as a primitive integer that [`number_type`] refuses, or an `Option` of
/// one, with why a number field cannot be it, for messages: `` `u8`, an integer narrower
/// ... `` or `` `Option<u8>`, and `u8` is an integer narrower ... ``; `None` for any other
/// type.
pub fn refused_integer(ty: &Type) -> Option<String> {
    let (shown, name) = match simple_name(ty) {
        Some(name) => (format!("`{name}`,"), name),
        None => {
            let name = simple_name(option_argument(ty)?)?;
            (format!("`Option<{name}>`, and `{name}` is"), name)
        }
    };
    let why = match name.as_str() {
        "i8" | "i16" | "u8" | "u16" => "narrower than seqid's numbers (32 or 64 bits)",
        "i128" | "u128" => "wider than BSON's integers (64 bits at most)",
        "isize" | "usize" => "whose width depends on the platform",
        _ => return None,
    };
    Some(format!("{shown} an integer {why}"))
}

/// The one type argument of a type written `Option<T>` (any path to `Option`).
fn option_argument(ty: &Type) -> Option<&Type> {
    only_argument(ty, "Option")
}

/// The element type of a type written `Vec<T>` (any path to `Vec`).
pub fn vec_element(ty: &Type) -> Option<&Type> {
    only_argument(ty, "Vec")
}

/// The one type argument of a type written `Wrapper<T>` (any path to it).
fn only_argument<'a>(ty: &'a Type, wrapper: &str) -> Option<&'a Type> {
    let segment = last_segment(ty).filter(|segment| segment.ident == wrapper)?;
    let PathArguments::AngleBracketed(args) = &segment.arguments else {
        return None;
    };
    let mut args = args.args.iter();
    match (args.next(), args.next()) {
        (Some(GenericArgument::Type(inner)), None) => Some(inner),
        _ => None,
    }
}
