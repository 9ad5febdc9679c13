//! RRSIG and SIG signature times (RFC 4034 §3.2): 32-bit seconds since 1970-01-01 UTC,
//! written either as `YYYYMMDDHHmmSS` in UTC or as a plain decimal number of seconds.
//! Printed in the date form. Dates after 2106-02-07 06:28:15 do not fit 32 bits and are
//! refused (the serial-number arithmetic of RFC 4034 §3.1.5 concerns validity checks,
//! not the presentation).

use super::fields::RdataReader;
use super::format::FieldKind;
use super::push_fmt;
use crate::error::Result;
use crate::name::Dname;
use crate::text::Lexer;
use crate::types::parse_decimal;

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
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
    let (hour, minute, second) = (num(8..10)?, num(10..12)?, num(12..14)?);
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

/// Appends `YYYYMMDDHHmmSS` for a 32-bit time.
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

    #[test]
    fn every_day_round_trips() {
        for day in (0..49_710u32).step_by(7) {
            let secs = day * 86_400 + 3_723;
            assert_eq!(parse_sig_time(text(secs).as_bytes()), Some(secs));
        }
    }
}
