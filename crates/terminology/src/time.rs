//! FHIR instants from the system clock, in UTC, without a date crate:
//! an expansion's `timestamp`, a stored resource's `meta.lastUpdated`.

use std::time::{SystemTime, UNIX_EPOCH};

/// `t` as a FHIR instant in UTC: `2025-01-31T12:00:00Z`, or with `millis`
/// `2025-01-31T12:00:00.123Z`. Times before 1970 are 1970.
pub fn instant(t: SystemTime, millis: bool) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let rest = secs % 86_400;
    // Days to a civil date (proleptic Gregorian), by eras of 400 years
    // (Howard Hinnant's algorithm).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let fraction = if millis {
        format!(".{:03}", since.subsec_millis())
    } else {
        String::new()
    };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}{fraction}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_utc_calendar_dates() {
        let at = |secs: u64, millis: u64| {
            instant(
                UNIX_EPOCH + std::time::Duration::from_millis(secs * 1000 + millis),
                true,
            )
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(1_234_567_890, 5), "2009-02-13T23:31:30.005Z");
        // A leap day, and the turn of a century that is not a leap year.
        assert_eq!(at(951_782_400, 0), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(4_107_542_399, 999), "2100-02-28T23:59:59.999Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
    }
}
