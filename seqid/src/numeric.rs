//! Reading numbers that other tools wrote: Int32, Int64, Double (the mongo shell's default)
//! or Decimal128 (`NumberDecimal`).

use mongodb::bson::Bson;

/// 2^53: below it a Double holds every integer; from it on, neighbours collapse
/// (2^53 + 1 rounds back to 2^53), so a Double counter there cannot count by one.
pub(crate) const DOUBLE_LIMIT: f64 = 9_007_199_254_740_992.0;

/// The integer a counter holds: an Int32, an Int64, or a Double or Decimal128 with no
/// fraction.
pub(crate) fn integral(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(v) => Some((*v).into()),
        Bson::Int64(v) => Some(*v),
        Bson::Double(v) => exact(*v),
        Bson::Decimal128(v) => {
            let text = v.to_string();
            text.parse::<i64>()
                .ok()
                .or_else(|| text.parse::<f64>().ok().and_then(exact))
        }
        _ => None,
    }
}

fn exact(v: f64) -> Option<i64> {
    (v.fract() == 0.0 && v.abs() < DOUBLE_LIMIT).then_some(v as i64)
}

/// The largest integer not above a numeric `_id` (`3.5` counts as `3`), or `None` for
/// anything that is not a number: such ids take no part in the optimistic sequence.
pub(crate) fn floor(value: &Bson) -> Option<i64> {
    if let Some(whole) = integral(value) {
        return Some(whole);
    }
    let double = match value {
        Bson::Double(v) => *v,
        Bson::Decimal128(v) => v.to_string().parse().ok()?,
        _ => return None,
    };
    // `as` saturates: a huge id yields i64::MAX, whose successor is an overflow error.
    double.is_finite().then(|| double.floor() as i64)
}

/// A number as a person reads it: `1e300`, not three hundred digits.
pub(crate) fn shown(value: &Bson) -> String {
    match value {
        Bson::Double(v) => format!("{v:?}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_accepts_every_type_other_tools_write() {
        assert_eq!(integral(&Bson::Int32(7)), Some(7));
        assert_eq!(integral(&Bson::Int64(1 << 40)), Some(1 << 40));
        assert_eq!(integral(&Bson::Double(2.0)), Some(2));
        assert_eq!(integral(&Bson::Double(-3.0)), Some(-3));
        assert_eq!(integral(&decimal("42")), Some(42));
        assert_eq!(integral(&decimal("1E+3")), Some(1000));
    }

    fn decimal(text: &str) -> Bson {
        Bson::Decimal128(text.parse().unwrap())
    }

    #[test]
    fn integral_refuses_what_is_not_a_whole_number() {
        assert_eq!(integral(&Bson::Double(2.5)), None);
        assert_eq!(integral(&Bson::Double(f64::NAN)), None);
        assert_eq!(integral(&Bson::Double(1e300)), None);
        // 2^53 itself: 2^53 + 1 would round back to it.
        assert_eq!(integral(&Bson::Double(9_007_199_254_740_992.0)), None);
        assert_eq!(
            integral(&Bson::Double(9_007_199_254_740_991.0)),
            Some(9_007_199_254_740_991)
        );
        assert_eq!(integral(&Bson::String("1".into())), None);
        assert_eq!(integral(&Bson::Null), None);
        assert_eq!(integral(&decimal("4.5")), None);
    }

    #[test]
    fn floor_rounds_doubles_down_and_ignores_other_types() {
        assert_eq!(floor(&Bson::Double(3.5)), Some(3));
        assert_eq!(floor(&Bson::Double(-0.5)), Some(-1));
        assert_eq!(floor(&Bson::Int64(9)), Some(9));
        assert_eq!(floor(&Bson::Double(1e300)), Some(i64::MAX));
        assert_eq!(floor(&Bson::Double(f64::INFINITY)), None);
        assert_eq!(floor(&decimal("4.5")), Some(4));
        assert_eq!(floor(&decimal("12")), Some(12));
        assert_eq!(floor(&decimal("NaN")), None);
        assert_eq!(floor(&Bson::String("zzz".into())), None);
        assert_eq!(floor(&Bson::ObjectId(Default::default())), None);
    }
}
