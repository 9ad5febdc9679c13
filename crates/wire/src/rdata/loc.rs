//! LOC (RFC 1876): geographical location.
//!
//! Presentation (§3): `d1 [m1 [s1]] N|S d2 [m2 [s2]] E|W alt[m] [siz[m] [hp[m] [vp[m]]]]`
//! with seconds to thousandths and metres to centimetres. Defaults: size 1 m,
//! horizontal precision 10 000 m, vertical precision 10 m. On the wire the text order is
//! not kept (version and sizes come first), so this type has its own [`Format`].
//!
//! Sizes are `mantissa × 10^exponent` centimetres in one byte (§2); text values are
//! rounded down to that form, as BIND and dnspython do.

use super::fields::RdataReader;
use super::format::Format;
use super::{bad, push_fmt};
use crate::error::{Error, Result};
use crate::name::Dname;
use crate::text::{Lexer, Token};

/// Latitude and longitude are thousandths of an arc second offset by 2^31 (§2).
const EQUATOR: u32 = 1 << 31;
/// Thousandths of an arc second per degree.
const PER_DEGREE: u32 = 3_600_000;
/// Altitude is centimetres above a base 100 000 m below the WGS 84 spheroid (§2).
const ALTITUDE_BASE: i64 = 10_000_000;
/// Largest size or precision: 9 × 10^9 cm.
const MAX_SIZE_CM: u64 = 9_000_000_000;

/// LOC (RFC 1876 §2), in wire units.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Loc {
    /// Format version, always 0.
    pub version: u8,
    /// Diameter of the enclosing sphere, `mantissa << 4 | exponent` centimetres.
    pub size: u8,
    /// Horizontal precision, same encoding.
    pub horizontal_precision: u8,
    /// Vertical precision, same encoding.
    pub vertical_precision: u8,
    /// Thousandths of an arc second north of the equator, plus 2^31.
    pub latitude: u32,
    /// Thousandths of an arc second east of Greenwich, plus 2^31.
    pub longitude: u32,
    /// Centimetres above 100 000 m below the WGS 84 reference spheroid.
    pub altitude: u32,
}

/// Parses `digits[.fraction]` with at most `max_frac` fraction digits, scaled by
/// 10^`max_frac`; an optional `m` suffix when `metres`; a leading `-` when `signed`.
fn parse_fixed(text: &[u8], max_frac: u32, metres: bool, signed: bool) -> Option<i64> {
    let text = if metres { text.strip_suffix(b"m").unwrap_or(text) } else { text };
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) if signed => (true, rest),
        _ => (false, text),
    };
    let (whole, frac) = match text.iter().position(|&c| c == b'.') {
        Some(i) => (text.get(..i)?, text.get(i + 1..)?),
        None => (text, &b""[..]),
    };
    let digits = |s: &[u8]| !s.is_empty() && s.len() <= 10 && s.iter().all(u8::is_ascii_digit);
    if !digits(whole) || (text.contains(&b'.') && !digits(frac)) || frac.len() > max_frac as usize {
        return None;
    }
    let mut value: i64 = 0;
    for &c in whole.iter().chain(frac) {
        value = value * 10 + i64::from(c - b'0');
    }
    value *= 10i64.pow(max_frac - frac.len() as u32);
    Some(if negative { -value } else { value })
}

/// Reads `deg [min [sec]] hemisphere` and returns the wire value.
fn parse_coordinate(lx: &mut Lexer<'_>, max_degrees: u32, hemispheres: [u8; 2]) -> Result<u32> {
    let (what, degrees_what) = match max_degrees {
        90 => ("latitude", "latitude degrees (0..90)"),
        _ => ("longitude", "longitude degrees (0..180)"),
    };
    let deg_token = lx.expect(degrees_what)?;
    let degrees: u32 = deg_token.number(degrees_what)?;
    let mut parts = [0i64; 2]; // minutes, thousandths of seconds
    let mut token = lx.expect("a hemisphere letter")?;
    for (i, part) in parts.iter_mut().enumerate() {
        let value = if i == 0 {
            parse_fixed(token.text, 0, false, false)
        } else {
            parse_fixed(token.text, 3, false, false)
        };
        match value {
            Some(v) => *part = v,
            None => break,
        }
        token = lx.expect("a hemisphere letter")?;
    }
    let [minutes, millis] = parts;
    let sign = match token.text {
        [c] if c.eq_ignore_ascii_case(&hemispheres[0]) => 1,
        [c] if c.eq_ignore_ascii_case(&hemispheres[1]) => -1,
        _ => {
            let [a, b] = hemispheres.map(char::from);
            return Err(token.error(format!(
                "expected the {what} hemisphere {a} or {b}, found '{}'",
                token.display()
            )));
        }
    };
    let total = i64::from(degrees) * i64::from(PER_DEGREE) + minutes * 60_000 + millis;
    if minutes > 59 || millis >= 60_000 || total > i64::from(max_degrees * PER_DEGREE) {
        return Err(deg_token.error(format!("{what} out of range")));
    }
    Ok((i64::from(EQUATOR) + sign * total) as u32)
}

/// Encodes a size in centimetres as `mantissa << 4 | exponent`, rounding down.
fn encode_size(cm: u64) -> u8 {
    let mut exponent = 0u8;
    let mut mantissa = cm;
    while mantissa > 9 {
        mantissa /= 10;
        exponent += 1;
    }
    (mantissa as u8) << 4 | exponent
}

/// Decodes a size byte into centimetres; `None` for digits above 9 or a non-canonical
/// zero (mantissa 0 with an exponent), which would not survive a round trip.
fn decode_size(byte: u8) -> Option<u64> {
    let (mantissa, exponent) = (byte >> 4, byte & 0x0F);
    if mantissa > 9 || exponent > 9 || (mantissa == 0 && exponent != 0) {
        return None;
    }
    Some(u64::from(mantissa) * 10u64.pow(u32::from(exponent)))
}

/// Reads an optional size token in metres.
fn parse_size(token: Option<Token<'_>>, default: u8) -> Result<u8> {
    let Some(token) = token else { return Ok(default) };
    parse_fixed(token.text, 2, true, false)
        .and_then(|cm| u64::try_from(cm).ok())
        .filter(|&cm| cm <= MAX_SIZE_CM)
        .map(encode_size)
        .ok_or_else(|| {
            token.error(format!(
                "expected a size in metres (0 to 90000000.00), found '{}'",
                token.display()
            ))
        })
}

impl Format for Loc {
    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let latitude = parse_coordinate(lx, 90, *b"NS")?;
        let longitude = parse_coordinate(lx, 180, *b"EW")?;
        let alt_token = lx.expect("the altitude in metres")?;
        let altitude = parse_fixed(alt_token.text, 2, true, true)
            .map(|cm| cm + ALTITUDE_BASE)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| {
                alt_token.error(format!(
                    "expected an altitude in metres (-100000.00 to 42849672.95), found '{}'",
                    alt_token.display()
                ))
            })?;
        let size = parse_size(lx.next_token()?, 0x12)?; // 1 m
        let horizontal = parse_size(lx.next_token()?, 0x16)?; // 10 000 m
        let vertical = parse_size(lx.next_token()?, 0x13)?; // 10 m
        out.extend_from_slice(&[0, size, horizontal, vertical]);
        for v in [latitude, longitude, altitude] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let loc = Loc::decode(rd)?;
        write_coordinate(loc.latitude, *b"NS", out);
        out.push(' ');
        write_coordinate(loc.longitude, *b"EW", out);
        out.push(' ');
        write_metres(i64::from(loc.altitude) - ALTITUDE_BASE, out);
        for byte in [loc.size, loc.horizontal_precision, loc.vertical_precision] {
            out.push(' ');
            let cm = decode_size(byte).unwrap_or(0); // checked by decode
            write_metres(cm as i64, out);
        }
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        Loc::decode(rd).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Self> {
        let at = rd.pos();
        let [version, size, horizontal_precision, vertical_precision] = rd.array::<4>()?;
        let (latitude, longitude, altitude) = (rd.u32()?, rd.u32()?, rd.u32()?);
        check_fields(
            at,
            version,
            [size, horizontal_precision, vertical_precision],
            latitude,
            longitude,
        )?;
        Ok(Loc {
            version,
            size,
            horizontal_precision,
            vertical_precision,
            latitude,
            longitude,
            altitude,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[
            self.version,
            self.size,
            self.horizontal_precision,
            self.vertical_precision,
        ]);
        for v in [self.latitude, self.longitude, self.altitude] {
            out.extend_from_slice(&v.to_be_bytes());
        }
    }
}

/// The wire rules: version 0 (§2: other versions have another layout), size digits
/// 0..=9, coordinates within ±90° and ±180°.
fn check_fields(
    at: usize,
    version: u8,
    sizes: [u8; 3],
    latitude: u32,
    longitude: u32,
) -> Result<(), Error> {
    if version != 0 {
        return Err(bad(at, "LOC version other than 0"));
    }
    if sizes.iter().any(|&b| decode_size(b).is_none()) {
        return Err(bad(at + 1, "LOC size or precision with a digit above 9"));
    }
    if latitude.abs_diff(EQUATOR) > 90 * PER_DEGREE {
        return Err(bad(at + 4, "LOC latitude beyond 90 degrees"));
    }
    if longitude.abs_diff(EQUATOR) > 180 * PER_DEGREE {
        return Err(bad(at + 8, "LOC longitude beyond 180 degrees"));
    }
    Ok(())
}

/// Writes `deg min sec.mmm H`.
fn write_coordinate(value: u32, hemispheres: [u8; 2], out: &mut String) {
    let hemisphere = char::from(if value >= EQUATOR { hemispheres[0] } else { hemispheres[1] });
    let total = value.abs_diff(EQUATOR);
    let (degrees, rest) = (total / PER_DEGREE, total % PER_DEGREE);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    let (seconds, millis) = (rest / 1000, rest % 1000);
    push_fmt(out, format_args!("{degrees} {minutes} {seconds}.{millis:03} {hemisphere}"));
}

/// Writes centimetres as metres with two decimals and an `m`.
fn write_metres(cm: i64, out: &mut String) {
    let sign = if cm < 0 { "-" } else { "" };
    let abs = cm.unsigned_abs();
    push_fmt(out, format_args!("{sign}{}.{:02}m", abs / 100, abs % 100));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdata::tests::round_trip;
    use crate::rdata::{parse_str, validate};
    use crate::types::Rtype;

    #[test]
    fn rfc1876_examples() {
        // §4.
        let wire = round_trip(
            Rtype::LOC,
            "42 21 54 N 71 06 18 W -24m 30m",
            "42 21 54.000 N 71 6 18.000 W -24.00m 30.00m 10000.00m 10.00m",
        );
        let lat = EQUATOR + (42 * 3600 + 21 * 60 + 54) * 1000;
        let lon = EQUATOR - (71 * 3600 + 6 * 60 + 18) * 1000;
        let mut expected = vec![0, 0x33, 0x16, 0x13];
        for v in [lat, lon, 10_000_000 - 2400] {
            expected.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(wire, expected);
        round_trip(
            Rtype::LOC,
            "42 21 43.952 N 71 5 6.344 W -24m 1m 200m",
            "42 21 43.952 N 71 5 6.344 W -24.00m 1.00m 200.00m 10.00m",
        );
        round_trip(
            Rtype::LOC,
            "52 14 05 N 00 08 50 E 10m",
            "52 14 5.000 N 0 8 50.000 E 10.00m 1.00m 10000.00m 10.00m",
        );
        round_trip(
            Rtype::LOC,
            "32 7 19 S 116 2 25 E 10m",
            "32 7 19.000 S 116 2 25.000 E 10.00m 1.00m 10000.00m 10.00m",
        );
        round_trip(
            Rtype::LOC,
            "42 21 28.764 N 71 00 51.617 W -44m 2000m",
            "42 21 28.764 N 71 0 51.617 W -44.00m 2000.00m 10000.00m 10.00m",
        );
    }

    #[test]
    fn omitted_parts_limits_and_rounding() {
        round_trip(
            Rtype::LOC,
            "90 S 180 E 0",
            "90 0 0.000 S 180 0 0.000 E 0.00m 1.00m 10000.00m 10.00m",
        );
        round_trip(
            Rtype::LOC,
            "1 2 N 3 W 1.5",
            "1 2 0.000 N 3 0 0.000 W 1.50m 1.00m 10000.00m 10.00m",
        );
        round_trip(
            Rtype::LOC,
            "0 N 0 E -100000.00m 90000000m 0 0.01",
            "0 0 0.000 N 0 0 0.000 E -100000.00m 90000000.00m 0.00m 0.01m",
        );
        round_trip(
            Rtype::LOC,
            "0 N 0 E 42849672.95m",
            "0 0 0.000 N 0 0 0.000 E 42849672.95m 1.00m 10000.00m 10.00m",
        );
        // 1234 cm rounds down to 1 × 10^3 cm.
        round_trip(
            Rtype::LOC,
            "0 N 0 E 0 12.34",
            "0 0 0.000 N 0 0 0.000 E 0.00m 10.00m 10000.00m 10.00m",
        );
        for bad_text in [
            "91 N 0 E 0",
            "90 1 N 0 E 0",
            "0 60 N 0 E 0",
            "0 0 60 N 0 E 0",
            "0 0 1.2345 N 0 E 0",
            "0 X 0 E 0",
            "0 N 181 E 0",
            "0 N 0 E -100000.01",
            "0 N 0 E 42849672.96",
            "0 N 0 E 0 90000000.01",
            "0 N 0 E 0 1.234",
            "0 N 0 E 0 1 1 1 1",
        ] {
            assert!(parse_str(Rtype::LOC, bad_text, None).is_err(), "{bad_text}");
        }
    }

    #[test]
    fn wire_rules() {
        let good = parse_str(Rtype::LOC, "0 N 0 E 0", None).unwrap();
        assert!(validate(Rtype::LOC, &good).is_ok());
        let mut version = good.clone();
        version[0] = 1;
        assert!(validate(Rtype::LOC, &version).is_err());
        let mut size = good.clone();
        size[1] = 0xA0;
        assert!(validate(Rtype::LOC, &size).is_err());
        size[1] = 0x01;
        assert!(validate(Rtype::LOC, &size).is_err(), "non-canonical zero");
        let mut lat = good.clone();
        lat[4..8].copy_from_slice(&(EQUATOR + 90 * PER_DEGREE + 1).to_be_bytes());
        assert!(validate(Rtype::LOC, &lat).is_err());
        assert!(validate(Rtype::LOC, &good[..15]).is_err());
    }
}
