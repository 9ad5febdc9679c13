//! RRSIG and SIG signature times (RFC 4034 §3.2): 32-bit seconds since 1970-01-01 UTC,
//! written either as `YYYYMMDDHHmmSS` in UTC or as a plain decimal number of seconds.
//! Printed in the date form. Dates after 2106-02-07 06:28:15 do not fit 32 bits and are
//! refused (the serial-number arithmetic of RFC 4034 §3.1.5 concerns validity checks,
//! not the presentation). The date form is read eight characters at a time, as integers.

use super::fields::RdataReader;
use super::format::FieldKind;
use super::push_fmt;
use crate::error::Result;
use crate::name::Dname;
use crate::text::Lexer;
use crate::types::parse_decimal;

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The (year, month, day) of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses `YYYYMMDDHHmmSS` (exactly 14 digits) or a decimal number of at most 10
/// digits; `None` if malformed, not a real date, or outside 32 bits.
pub(crate) fn parse_sig_time(text: &[u8]) -> Option<u32> {
    if let Ok(date) = <&[u8; 14]>::try_from(text) {
        return parse_date_time(date);
    }
    if text.len() <= 10 {
        return parse_decimal(text).and_then(|v| u32::try_from(v).ok());
    }
    None
}

/// Parses `YYYYMMDDHHmmSS`; `None` if not all digits, not a real date, or outside 32 bits.
fn parse_date_time(text: &[u8; 14]) -> Option<u32> {
    let (ymd, dhms) = (text.first_chunk::<8>()?, text.last_chunk::<8>()?);
    let [century, year, month, day] = digit_pairs(*ymd)?;
    let [_, hour, minute, second] = digit_pairs(*dhms)?;
    seconds_at(century * 100 + year, [month, day, hour, minute, second])
}

/// Seconds since the epoch of a date and time given as numbers; `None` if not a real
/// date and time, or outside 32 bits.
fn seconds_at(year: i64, [month, day, hour, minute, second]: [i64; 5]) -> Option<u32> {
    let valid = (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60;
    if !valid {
        return None;
    }
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    u32::try_from(secs).ok()
}

/// The four two-digit numbers spelt by eight ASCII digits, in order; `None` unless all
/// eight are digits. Works on the eight bytes at once as one integer.
fn digit_pairs(chars: [u8; 8]) -> Option<[i64; 4]> {
    const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    const SIXES: u64 = 0x0606_0606_0606_0606;
    // Byte i is the i-th character.
    let v = u64::from_le_bytes(chars);
    // Every byte in 0x30..=0x3F, and none above 0x39 (adding 6 would carry into the high
    // nibble; it cannot carry out of the byte).
    if v & HIGH_NIBBLES != ZEROS || v.wrapping_add(SIXES) & HIGH_NIBBLES != ZEROS {
        return None;
    }
    let digits = v - ZEROS;
    // Byte 2k becomes 10 × digit 2k + digit 2k+1 (at most 99: nothing carries).
    let pairs = (digits * 10 + (digits >> 8)) & 0x00FF_00FF_00FF_00FF;
    let [a, _, b, _, c, _, d, _] = pairs.to_le_bytes();
    Some([a, b, c, d].map(i64::from))
}

/// Appends `YYYYMMDDHHmmSS` for a 32-bit time.
/// `secs` (seconds since the epoch, as RRSIG times are) as `YYYYMMDDHHmmSS` UTC, the
/// form of RFC 4034 §3.2.
pub fn sig_time_text(secs: u32) -> String {
    let mut out = String::new();
    write_sig_time(secs, &mut out);
    out
}

pub(crate) fn write_sig_time(secs: u32, out: &mut String) {
    let secs = i64::from(secs);
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rem = secs % 86_400;
    push_fmt(
        out,
        format_args!(
            "{year:04}{month:02}{day:02}{:02}{:02}{:02}",
            rem / 3600,
            rem / 60 % 60,
            rem % 60
        ),
    );
}

/// The signature time field kind.
pub(crate) struct SigTime;

impl FieldKind for SigTime {
    type Value = u32;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("a signature time (YYYYMMDDHHmmSS)")?;
        let v = parse_sig_time(token.text).ok_or_else(|| {
            token.error(format!(
                "expected a signature time (YYYYMMDDHHmmSS or seconds), found '{}'",
                token.display()
            ))
        })?;
        out.extend_from_slice(&v.to_be_bytes());
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        write_sig_time(rd.u32()?, out);
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.u32().map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<u32> {
        rd.u32()
    }

    fn encode(value: &u32, out: &mut Vec<u8>) {
        out.extend_from_slice(&value.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(secs: u32) -> String {
        let mut out = String::new();
        write_sig_time(secs, &mut out);
        out
    }

    #[test]
    fn both_forms() {
        // RFC 4034 §3.3 example times.
        assert_eq!(parse_sig_time(b"20030322173103"), Some(1_048_354_263));
        assert_eq!(parse_sig_time(b"1048354263"), Some(1_048_354_263));
        assert_eq!(text(1_048_354_263), "20030322173103");
        assert_eq!(text(0), "19700101000000");
        assert_eq!(text(u32::MAX), "21060207062815");
        assert_eq!(parse_sig_time(b"21060207062815"), Some(u32::MAX));
        assert_eq!(parse_sig_time(b"21060207062816"), None);
        assert_eq!(parse_sig_time(b"19691231235959"), None);
        assert_eq!(parse_sig_time(b"20240229000000"), Some(1_709_164_800));
        assert_eq!(parse_sig_time(b"20230229000000"), None);
        assert_eq!(parse_sig_time(b"20231301000000"), None);
        assert_eq!(parse_sig_time(b"20231231240000"), None);
        assert_eq!(parse_sig_time(b"4294967296"), None);
        assert_eq!(parse_sig_time(b"2023123100000"), None);
        assert_eq!(parse_sig_time(b""), None);
    }

    /// The digit-by-digit parser this module had before [`parse_date_time`].
    fn reference(text: &[u8]) -> Option<u32> {
        if text.len() <= 10 {
            return parse_decimal(text).and_then(|v| u32::try_from(v).ok());
        }
        if text.len() != 14 || !text.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let num = |range: std::ops::Range<usize>| -> Option<i64> {
            text.get(range).and_then(parse_decimal).and_then(|v| i64::try_from(v).ok())
        };
        let (year, month, day) = (num(0..4)?, num(4..6)?, num(6..8)?);
        seconds_at(year, [month, day, num(8..10)?, num(10..12)?, num(12..14)?])
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        /// Mostly digits, a few bytes just outside them, any length up to 16.
        #[test]
        fn date_parser_matches_reference(text in proptest::collection::vec(
            proptest::prop_oneof![
                40 => proptest::sample::select(b"0123456789".to_vec()),
                1 => proptest::sample::select(b"/:+- a\x00\xB0\xFF".to_vec()),
            ],
            0..17,
        )) {
            proptest::prop_assert_eq!(parse_sig_time(&text), reference(&text));
        }

        /// Plausible dates: each field from a range a little wider than its real one.
        #[test]
        fn date_fields_match_reference(
            year in 1900u32..2200, month in 0u32..14, day in 0u32..33,
            hour in 0u32..26, minute in 0u32..62, second in 0u32..62,
        ) {
            let text = format!("{year:04}{month:02}{day:02}{hour:02}{minute:02}{second:02}");
            proptest::prop_assert_eq!(parse_sig_time(text.as_bytes()), reference(text.as_bytes()));
        }

        /// A real date with one byte replaced by any byte.
        #[test]
        fn spoilt_dates_match_reference(
            secs in proptest::prelude::any::<u32>(), at in 0usize..14,
            byte in proptest::prelude::any::<u8>(),
        ) {
            let mut text = String::new();
            write_sig_time(secs, &mut text);
            let mut text = text.into_bytes();
            if let Some(c) = text.get_mut(at) {
                *c = byte;
            }
            proptest::prop_assert_eq!(parse_sig_time(&text), reference(&text));
        }
    }

    #[test]
    fn every_day_round_trips() {
        for day in (0..49_710u32).step_by(7) {
            let secs = day * 86_400 + 3_723;
            assert_eq!(parse_sig_time(text(secs).as_bytes()), Some(secs));
        }
    }
}
