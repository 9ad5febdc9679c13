//! The serial an update gives a zone when it leaves the SOA alone (RFC 2136 §3.6: "the
//! zone's SOA SERIAL must be incremented"), by the zone's policy: the names and rules
//! of Knot DNS's `serial-policy`, with BIND's care to never produce 0.

/// How the serial is raised.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SerialPolicy {
    /// One more (RFC 1982 §3.1 addition).
    #[default]
    Increment,
    /// The time in seconds since the epoch, or one more when that is not higher.
    UnixTime,
    /// `YYYYMMDDnn` for the day (UTC), `nn` from 00; one more when that is not higher
    /// (a second change the same day, or a serial already past today's).
    DateSerial,
}

impl SerialPolicy {
    /// Reads `increment`, `unixtime` or `dateserial`.
    pub fn from_text(text: &str) -> Option<SerialPolicy> {
        match text {
            "increment" => Some(SerialPolicy::Increment),
            "unixtime" => Some(SerialPolicy::UnixTime),
            "dateserial" => Some(SerialPolicy::DateSerial),
            _ => None,
        }
    }

    /// The serial that follows `current` at `now` (seconds since the epoch). It is
    /// always higher than `current` in serial arithmetic (RFC 1982), and never 0, which
    /// some tools take for "unset" (BIND skips it too).
    pub fn next(self, current: u32, now: u64) -> u32 {
        let candidate = match self {
            SerialPolicy::Increment => None,
            // Serial arithmetic is modulo 2^32: the low bits are the serial of any time.
            SerialPolicy::UnixTime => Some((now & u64::from(u32::MAX)) as u32),
            SerialPolicy::DateSerial => date_serial(now),
        };
        let next = match candidate {
            Some(serial) if tern_zone::records::serial_gt(serial, current) => serial,
            _ => current.wrapping_add(1),
        };
        if next == 0 {
            1
        } else {
            next
        }
    }
}

/// `YYYYMMDD00` for the UTC day of `now`; `None` past the year 4294.
fn date_serial(now: u64) -> Option<u32> {
    let (year, month, day) = civil_from_days(now / 86_400);
    let serial = year.checked_mul(1_000_000)? + u64::from(month) * 10_000 + u64::from(day) * 100;
    u32::try_from(serial).ok()
}

/// The Gregorian date of a day counted from 1970-01-01 (the well-known era algorithm:
/// 400-year eras of 146,097 days, years starting in March so that leap days come last).
fn civil_from_days(days: u64) -> (u64, u32, u32) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
// Date serials are written as dates: 2023_11_14_00.
#[allow(clippy::inconsistent_digit_grouping)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(59), (1970, 3, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29), "leap day of a 400-year");
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(47_540), (2100, 2, 28));
        assert_eq!(civil_from_days(47_541), (2100, 3, 1), "2100 is not a leap year");
        assert_eq!(date_serial(1_700_000_000), Some(2023_11_14_00));
    }

    #[test]
    fn each_policy_raises_the_serial() {
        let now = 1_700_000_000; // 2023-11-14 22:13:20 UTC
        let inc = SerialPolicy::Increment;
        assert_eq!(inc.next(10, now), 11);
        assert_eq!(inc.next(u32::MAX, now), 1, "wraps past 0 (RFC 1982), skipping 0");
        let unix = SerialPolicy::UnixTime;
        assert_eq!(unix.next(10, now), 1_700_000_000);
        assert_eq!(unix.next(1_700_000_000, now), 1_700_000_001, "same second");
        assert_eq!(unix.next(1_800_000_000, now), 1_800_000_001, "serial ahead of the clock");
        let date = SerialPolicy::DateSerial;
        assert_eq!(date.next(2023_11_13_05, now), 2023_11_14_00);
        assert_eq!(date.next(2023_11_14_00, now), 2023_11_14_01, "again the same day");
        assert_eq!(date.next(2023_11_14_99, now), 2023_11_15_00, "the 101st change of a day");
        assert_eq!(date.next(7, now), 2023_11_14_00);
        assert_eq!(date.next(3_000_000_000, now), 3_000_000_001, "not higher: one more");
    }

    #[test]
    fn names() {
        assert_eq!(SerialPolicy::from_text("unixtime"), Some(SerialPolicy::UnixTime));
        assert_eq!(SerialPolicy::from_text("dateserial"), Some(SerialPolicy::DateSerial));
        assert_eq!(SerialPolicy::from_text("increment"), Some(SerialPolicy::Increment));
        assert_eq!(SerialPolicy::from_text("date"), None);
    }
}
