//! The days a search can be bounded by (`--since`, `--until`, `since=`,
//! `until=`): those the index's date field can hold.
//!
//! tantivy keeps a date as nanoseconds since 1970 in an `i64`, which spans
//! 1677-09-21 to 2262-04-11. A day outside that overflowed when the bound
//! was made and, wrapped round, selected every thread (`since=9999-12-31`
//! gave all 157 hits); so a day is checked here, once, by every caller.

use time::macros::date;
use time::Date;

/// The earliest day a bound may name (the first whole year tantivy holds).
pub const FIRST_DAY: Date = date!(1678 - 01 - 01);
/// The latest day a bound may name; `until` reaches to its end, the
/// midnight after it, which must fit too.
pub const LAST_DAY: Date = date!(2261 - 12 - 31);

/// A bound the index cannot hold, named by the option it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {day} is outside the days the index can hold ({FIRST_DAY} to {LAST_DAY})")]
pub struct DayOutOfRange {
    /// The option as the user wrote it (`since`, `--until`).
    pub field: String,
    pub day: Date,
}

/// `day` if a bound can name it.
pub fn check_day(field: &str, day: Date) -> Result<Date, DayOutOfRange> {
    if (FIRST_DAY..=LAST_DAY).contains(&day) {
        Ok(day)
    } else {
        Err(DayOutOfRange { field: field.to_string(), day })
    }
}

/// Seconds since 1970 at the start of `day` (UTC, as luntan reads forum times).
pub(crate) fn midnight_secs(day: Date) -> i64 {
    day.midnight().assume_utc().unix_timestamp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ends_fit_in_the_index_and_a_day_past_them_is_refused() {
        // A bound is made of the day's midnight and, for `until`, the next
        // one: both must survive tantivy's multiplication by 10^9.
        for day in [FIRST_DAY, LAST_DAY, LAST_DAY.next_day().unwrap()] {
            assert!(midnight_secs(day).checked_mul(1_000_000_000).is_some(), "{day}");
        }
        assert_eq!(check_day("since", FIRST_DAY), Ok(FIRST_DAY));
        assert_eq!(check_day("until", LAST_DAY), Ok(LAST_DAY));
        for (field, day) in [("since", date!(9999 - 12 - 31)), ("until", date!(1600 - 01 - 01)), ("since", FIRST_DAY.previous_day().unwrap())] {
            let e = check_day(field, day).unwrap_err();
            assert_eq!(e.day, day);
            assert!(e.to_string().starts_with(&format!("{field}: {day} is outside")), "{e}");
        }
    }
}
