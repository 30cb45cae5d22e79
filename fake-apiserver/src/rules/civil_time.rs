//! Days since the Unix epoch and the proleptic Gregorian calendar's dates, both ways, and the
//! `metav1.Time` text of a second (`2006-01-02T15:04:05Z`), both ways: the arithmetic behind the
//! time fast paths that skip a general parser or formatter (a managedFields entry's time, the
//! time every write stamps, the schema's `date` format).

/// Seconds in a day.
const DAY: i64 = 86_400;
/// Days in a 400-year era of the Gregorian calendar.
const ERA_DAYS: i64 = 146_097;
/// Days from 0000-03-01 (the first day of the era the computation counts from) to 1970-01-01.
const EPOCH_SHIFT: i64 = 719_468;

/// Days from 1970-01-01 to `year-month-day` (a valid date; years counted from March inside
/// the computation, so February's leap day ends a year).
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let year_of_era = y.rem_euclid(400);
    let day_of_year = (153 * m + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * ERA_DAYS + day_of_era - EPOCH_SHIFT
}

/// The date `days` after 1970-01-01, as (year, month, day): the inverse of
/// [`days_from_civil`].
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + EPOCH_SHIFT;
    let era = shifted.div_euclid(ERA_DAYS);
    let day_of_era = shifted.rem_euclid(ERA_DAYS);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let m = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * m + 2) / 5 + 1;
    let month = if m < 10 { m + 3 } else { m - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The first second of the year 10000: from there a year needs five digits.
const YEAR_10000: i64 = 253_402_300_800;

/// `second` (whole seconds since the epoch, 1970 to 9999) as `metav1.Time` writes it,
/// `2006-01-02T15:04:05Z`; `None` outside those years (a general formatter's work).
pub(crate) fn format_second(second: i64) -> Option<String> {
    if !(0..YEAR_10000).contains(&second) {
        return None;
    }
    let (year, month, day) = civil_from_days(second.div_euclid(DAY));
    let in_day = second.rem_euclid(DAY);
    let mut text = [0u8; 20];
    let mut put = |at: usize, width: usize, mut n: i64| {
        for slot in text[at..at + width].iter_mut().rev() {
            // Each digit is below 10, so the cast keeps it.
            *slot = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, in_day / 3_600);
    put(14, 2, in_day / 60 % 60);
    put(17, 2, in_day % 60);
    for (at, mark) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'Z'),
    ] {
        text[at] = mark;
    }
    // Only ASCII digits and marks were written.
    String::from_utf8(text.to_vec()).ok()
}

/// The year, month and day of a `2006-01-02` date (a four-digit year, two-digit month and day,
/// the day within its month in the Gregorian calendar); `None` for any other text.
pub(crate) fn civil_date(text: &[u8]) -> Option<(i64, i64, i64)> {
    if text.len() != 10 || text[4] != b'-' || text[7] != b'-' {
        return None;
    }
    let (year, month, day) = (
        digits(&text[0..4])?,
        digits(&text[5..7])?,
        digits(&text[8..10])?,
    );
    let days = days_in_month(year, month)?;
    (1..=days).contains(&day).then_some((year, month, day))
}

/// The number a run of ASCII digits spells; `None` when a byte is not a digit.
fn digits(text: &[u8]) -> Option<i64> {
    text.iter().try_fold(0i64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
    })
}

/// How many days `month` (1–12) of `year` has in the Gregorian calendar; `None` for a month
/// out of range.
fn days_in_month(year: i64, month: i64) -> Option<i64> {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    Some(match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    })
}

/// The seconds since the epoch of a valid time in the form the server writes
/// (`2006-01-02T15:04:05Z`, as [`format_second`] writes it) in the years 1 to 9998, read
/// without a general parser; `None` for any other text, valid or not (a parser's work). A
/// second of 60 is left to the parser.
pub(crate) fn written_second(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    let shape = b.len() == 20 && b[10] == b'T' && b[13] == b':' && b[16] == b':' && b[19] == b'Z';
    if !shape {
        return None;
    }
    let (year, month, day) = civil_date(&b[..10])?;
    let (hour, minute, second) = (
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
    );
    // Past 9998 the parser's range ends (a timestamp must be a civil time at every offset).
    if !(1..=9998).contains(&year) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Every day from 1600 to 2500 (leap centuries, the epoch, the days around every
    /// February's end) goes to its date and back, and the date is jiff's.
    #[test]
    fn days_and_dates_agree_with_jiff_both_ways() {
        let first = days_from_civil(1600, 1, 1);
        let last = days_from_civil(2500, 12, 31);
        let mut expected = jiff::civil::date(1600, 1, 1);
        for days in first..=last {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(
                (y, m, d),
                (
                    i64::from(expected.year()),
                    i64::from(expected.month()),
                    i64::from(expected.day())
                ),
                "day {days}"
            );
            assert_eq!(days_from_civil(y, m, d), days);
            expected = expected.tomorrow().expect("in range");
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[rstest]
    #[case::epoch(0, "1970-01-01T00:00:00Z")]
    #[case::last_of_a_day(86_399, "1970-01-01T23:59:59Z")]
    #[case::leap_day(951_782_400, "2000-02-29T00:00:00Z")]
    #[case::recent(1_796_611_542, "2026-12-07T02:45:42Z")]
    #[case::jiffs_last_second(253_402_207_200, "9999-12-30T22:00:00Z")]
    #[case::last_four_digit_second(YEAR_10000 - 1, "9999-12-31T23:59:59Z")]
    fn seconds_are_written_as_metav1_time(#[case] second: i64, #[case] text: &str) {
        assert_eq!(format_second(second).as_deref(), Some(text));
        // jiff's range ends a day early (a timestamp must be a civil time at every offset).
        if let Ok(jiff) = jiff::Timestamp::from_second(second) {
            assert_eq!(jiff.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(), text);
        }
    }

    /// Before 1970 and from the year 10000 on, the caller formats: `None`.
    #[rstest]
    #[case::before_the_epoch(-1)]
    #[case::year_10000(YEAR_10000)]
    fn seconds_out_of_range_are_left_to_the_caller(#[case] second: i64) {
        assert_eq!(format_second(second), None);
    }

    /// A spread of seconds (one every ~8.9 days, at every time of day, over 2000 years from 1970)
    /// formats as jiff formats.
    #[test]
    fn a_spread_of_seconds_formats_as_jiff_does() {
        let mut second = 0i64;
        while second < 2_000 * 365 * DAY {
            let jiff = jiff::Timestamp::from_second(second).expect("in range");
            assert_eq!(
                format_second(second).as_deref(),
                Some(jiff.strftime("%Y-%m-%dT%H:%M:%SZ").to_string().as_str()),
                "second {second}"
            );
            second += 7_919 * 97;
        }
    }
}
