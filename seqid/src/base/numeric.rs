//! Reading numbers that other tools wrote: Int32, Int64, Double (the mongo shell's default)
//! or Decimal128 (`NumberDecimal`).

use std::ops::RangeInclusive;

use mongodb::bson::{Bson, Decimal128};

/// 2^53: below it a Double holds every integer; from it on, neighbours collapse
/// (2^53 + 1 rounds back to 2^53), so a Double counter there cannot count by one.
pub(crate) const DOUBLE_LIMIT: f64 = 9_007_199_254_740_992.0;
const DOUBLE_LIMIT_INT: i128 = 1 << 53;

/// The integer a counter holds: an Int32, an Int64, a Double with no fraction below
/// 2^53, or a Decimal128 with no fraction within the `i64` range.
pub(crate) fn integral(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(v) => Some((*v).into()),
        Bson::Int64(v) => Some(*v),
        Bson::Double(v) => whole_double(*v).filter(|n| n.unsigned_abs() < 1 << 53),
        Bson::Decimal128(v) => match decimal(v) {
            Decimal::Integer(n) => i64::try_from(n).ok(),
            Decimal::Huge | Decimal::NotWhole => None,
        },
        _ => None,
    }
}

/// The integer a Double holds, if it has no fraction and an `i64` holds it: the numbers
/// MongoDB's `$bitsAllClear` matches (NaN and the infinities are not among them).
fn whole_double(v: f64) -> Option<i64> {
    // -2^63 and 2^63 are exact as f64; `as` is exact for a whole value between them.
    (v.fract() == 0.0 && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&v))
        .then_some(v as i64)
}

/// What a Decimal128 holds, read exactly (through f64, 2^53 + 1 would read as 2^53).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decimal {
    /// A whole number.
    Integer(i128),
    /// A whole number beyond the range of an i128.
    Huge,
    /// A fraction, NaN or an infinity.
    NotWhole,
}

/// Reads a Decimal128 from its text, which the bson crate writes as MongoDB does:
/// `-12`, `2.50`, `1E+3`, `1.5E-7`, `NaN`, `Infinity`.
pub(crate) fn decimal(value: &Decimal128) -> Decimal {
    let text = value.to_string();
    let (mantissa, exponent) = text.split_once(['E', 'e']).unwrap_or((&text, "0"));
    let Ok(exponent) = exponent.parse::<i32>() else {
        return Decimal::NotWhole;
    };
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, mantissa),
    };
    let (int_part, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{int_part}{fraction}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        // NaN, Infinity.
        return Decimal::NotWhole;
    }
    // The value is `digits` × 10^scale.
    let scale = i64::from(exponent) - fraction.len() as i64;
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Decimal::Integer(0);
    }
    let (digits, scale) = if scale < 0 {
        // Whole only if the digits below the unit are all zero.
        let cut = usize::try_from(-scale).unwrap_or(usize::MAX);
        if cut >= digits.len() || !digits[digits.len() - cut..].bytes().all(|b| b == b'0') {
            return Decimal::NotWhole;
        }
        (&digits[..digits.len() - cut], 0)
    } else {
        (digits, scale)
    };
    // A Decimal128 has at most 34 digits, which an i128 holds.
    let Ok(coefficient) = digits.parse::<i128>() else {
        return Decimal::Huge;
    };
    u32::try_from(scale)
        .ok()
        .and_then(|scale| 10_i128.checked_pow(scale))
        .and_then(|power| coefficient.checked_mul(power))
        .map_or(Decimal::Huge, |whole| Decimal::Integer(sign * whole))
}

/// Whether a counter holding `value` can be moved up by as much as `reach` and still hand
/// out ids: an Int32 or Int64 (the server answers an overflow itself), a whole Double
/// that stays within ±2^53 ([`double_range`]), a whole Decimal128 that stays within the
/// `i64` range. The counter's update applies only to such a counter; this is its rule,
/// read in Rust, for a counter the update did not apply to.
pub(crate) fn countable(value: &Bson, reach: i64) -> bool {
    match value {
        Bson::Int32(_) | Bson::Int64(_) => true,
        Bson::Double(v) => whole_double(*v).is_some_and(|n| double_range(reach).contains(&n)),
        Bson::Decimal128(v) => match decimal(v) {
            Decimal::Integer(n) => n
                .checked_add(i128::from(reach))
                .is_some_and(|next| i64::try_from(next).is_ok()),
            Decimal::Huge | Decimal::NotWhole => false,
        },
        _ => false,
    }
}

/// The whole Doubles that can take `+ reach` and stay strictly within ±2^53, where a
/// Double still holds every integer: `-2^53 < seq + reach < 2^53`.
pub(crate) fn double_range(reach: i64) -> RangeInclusive<i64> {
    let clamp = |n: i128| i64::try_from(n).unwrap_or(if n < 0 { i64::MIN } else { i64::MAX });
    let reach = i128::from(reach);
    clamp(-DOUBLE_LIMIT_INT + 1 - reach)..=clamp(DOUBLE_LIMIT_INT - 1 - reach)
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

/// Why seqid cannot count from a counter's value, for `ErrorKind::CounterNotNumeric`. A
/// whole number is reported only when the ids asked for would take it out of range, so
/// the value alone tells which cause it is.
pub(crate) fn not_countable(value: &Bson) -> &'static str {
    const NOT_WHOLE: &str = "which is not a whole number: an id cannot come from it";
    match value {
        Bson::Double(v) if v.fract() == 0.0 && v.abs() >= DOUBLE_LIMIT => {
            "a Double from 2^53 on, where it can no longer hold every integer (2^53 + 1 rounds \
             back to 2^53): store it as a long (NumberLong) to go on"
        }
        Bson::Double(v) if v.fract() == 0.0 => {
            "a Double that the ids asked for would take to 2^53 or beyond, where it can no longer \
             hold every integer (2^53 + 1 rounds back to 2^53): store it as a long (NumberLong) to go on"
        }
        Bson::Double(_) => NOT_WHOLE,
        Bson::Decimal128(d) => match decimal(d) {
            Decimal::Integer(n) if i64::try_from(n).is_ok() => {
                "which the ids asked for would take beyond the range of an i64 id"
            }
            Decimal::Integer(_) | Decimal::Huge => "which is beyond the range of an i64 id",
            Decimal::NotWhole => NOT_WHOLE,
        },
        _ => {
            "which is not a number (seqid counts from an Int32, Int64, or a whole Double or Decimal128)"
        }
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
    fn decimals_are_read_exactly() {
        let read = |text: &str| super::decimal(&text.parse().unwrap());
        assert_eq!(read("42"), Decimal::Integer(42));
        assert_eq!(read("-7"), Decimal::Integer(-7));
        assert_eq!(read("3.00"), Decimal::Integer(3));
        assert_eq!(read("1E+3"), Decimal::Integer(1000));
        assert_eq!(read("0E-10"), Decimal::Integer(0));
        // 2^53 + 1, which a Double cannot hold.
        assert_eq!(
            read("9007199254740993"),
            Decimal::Integer(9_007_199_254_740_993)
        );
        assert_eq!(
            read("1.0000000000000001E+16"),
            Decimal::Integer(10_000_000_000_000_001)
        );
        assert_eq!(read("2.5"), Decimal::NotWhole);
        assert_eq!(read("2.50"), Decimal::NotWhole);
        assert_eq!(read("0.5"), Decimal::NotWhole);
        assert_eq!(read("1.5E-7"), Decimal::NotWhole);
        assert_eq!(read("NaN"), Decimal::NotWhole);
        assert_eq!(read("-Infinity"), Decimal::NotWhole);
        assert_eq!(read("1E+40"), Decimal::Huge);
        assert_eq!(integral(&decimal("9223372036854775807")), Some(i64::MAX));
        assert_eq!(integral(&decimal("9223372036854775808")), None);
    }

    #[test]
    fn a_counter_is_countable_if_the_change_leaves_it_an_id() {
        const LIMIT: i64 = 1 << 53;
        assert!(countable(&Bson::Int32(i32::MAX), 1));
        assert!(countable(&Bson::Int64(5), 1_000));
        assert!(countable(&Bson::Double(7.0), 1));
        assert!(countable(&Bson::Double(-3.0), 0));
        assert!(countable(&Bson::Double((LIMIT - 2) as f64), 1));
        // $inc: 1 would reach 2^53.
        assert!(!countable(&Bson::Double((LIMIT - 1) as f64), 1));
        assert!(countable(&Bson::Double((LIMIT - 1) as f64), 0));
        assert!(!countable(&Bson::Double((LIMIT - 50) as f64), 100));
        assert!(!countable(&Bson::Double(LIMIT as f64), 0));
        assert!(!countable(&Bson::Double(-(LIMIT as f64)), 0));
        assert!(!countable(&Bson::Double(1.5), 1));
        assert!(!countable(&Bson::Double(f64::NAN), 1));
        assert!(!countable(&Bson::Double(f64::INFINITY), 1));
        assert!(countable(&decimal("41"), 1));
        assert!(!countable(&decimal("2.5"), 1));
        assert!(!countable(&decimal("9223372036854775807"), 1));
        assert!(countable(&decimal("9223372036854775807"), 0));
        assert!(!countable(&Bson::String("12".into()), 1));
        assert!(!countable(&Bson::Null, 1));
        // Whatever the step, the range stays within i64.
        assert_eq!(double_range(0), -(LIMIT - 1)..=LIMIT - 1);
        assert_eq!(*double_range(i64::MAX).start(), i64::MIN);
        assert_eq!(*double_range(i64::MIN).end(), i64::MAX);
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
