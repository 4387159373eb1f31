//! Forum timestamps, which come in many shapes (`2024-3-5 12:34`,
//! `2024/03/05 12:34:56`, `2024年3月5日 12:34`, `發表於 2024-03-05`), turned
//! into one: `YYYY-MM-DDTHH:MM:SS`, the forum's local wall-clock time.

use std::sync::OnceLock;

use regex::Regex;

fn pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?(?:[\sT]*(\d{1,2})\s*[:：时]\s*(\d{1,2})(?:\s*[:：分]\s*(\d{1,2}))?)?")
            .expect("static date pattern")
    })
}

/// The first date (and time) found in `text`, normalized; `None` when there is none
/// or it is not a real calendar date.
pub fn normalize_time(text: &str) -> Option<String> {
    let c = pattern().captures(text)?;
    let num = |i: usize| c.get(i).map(|m| m.as_str().parse::<u32>().unwrap_or(99));
    let (y, mo, d) = (num(1)?, num(2)?, num(3)?);
    let (h, mi, s) = (num(4).unwrap_or(0), num(5).unwrap_or(0), num(6).unwrap_or(0));
    let month = time::Month::try_from(mo as u8).ok()?;
    time::Date::from_calendar_date(y as i32, month, d as u8).ok()?;
    if h > 23 || mi > 59 || s > 59 {
        return None;
    }
    Some(format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}"))
}

/// A forum time written relative to the moment the page was fetched, as
/// microblogs write it (`刚刚`, `3分钟前`, `2小时前`, `今天 08:00`, `昨天 12:30`,
/// `前天 12:30`, `11月28日 08:00`, `11-28 08:00`), or any absolute shape
/// [`normalize_time`] reads. `now` is the fetch time in the forum's local
/// wall clock; the result is normalized like [`normalize_time`]'s.
pub fn resolve_time(text: &str, now: time::PrimitiveDateTime) -> Option<String> {
    static RELATIVE: OnceLock<Regex> = OnceLock::new();
    let re = RELATIVE.get_or_init(|| {
        Regex::new(
            r"^\s*(?:(刚刚)|(\d+)\s*(秒|分钟|小时)前|(今天|昨天|前天)\s*(\d{1,2})[:：](\d{2})|(\d{1,2})(?:月|-)(\d{1,2})日?(?:\s+(\d{1,2})[:：](\d{2}))?)\s*$",
        )
        .expect("static relative-time pattern")
    });
    let fmt = |t: time::PrimitiveDateTime| format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", t.year(), t.month() as u8, t.day(), t.hour(), t.minute(), t.second());
    let Some(c) = re.captures(text) else { return normalize_time(text) };
    let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<i64>().ok());
    let at = |date: time::Date, h: i64, m: i64| -> Option<String> {
        let t = time::Time::from_hms(u8::try_from(h).ok()?, u8::try_from(m).ok()?, 0).ok()?;
        Some(fmt(time::PrimitiveDateTime::new(date, t)))
    };
    if c.get(1).is_some() {
        return Some(fmt(now));
    }
    if let (Some(n), Some(unit)) = (num(2), c.get(3)) {
        let back = match unit.as_str() {
            "秒" => time::Duration::seconds(n),
            "分钟" => time::Duration::minutes(n),
            _ => time::Duration::hours(n),
        };
        return now.checked_sub(back).map(fmt);
    }
    if let Some(day) = c.get(4) {
        let days = match day.as_str() {
            "今天" => 0,
            "昨天" => 1,
            _ => 2,
        };
        return at(now.date().checked_sub(time::Duration::days(days))?, num(5)?, num(6)?);
    }
    // Month and day without a year: this year's, or last year's when that
    // would lie in the future (a January fetch of a December post).
    let (mo, d) = (u8::try_from(num(7)?).ok()?, u8::try_from(num(8)?).ok()?);
    let (h, m) = (num(9).unwrap_or(0), num(10).unwrap_or(0));
    let month = time::Month::try_from(mo).ok()?;
    let this_year = time::Date::from_calendar_date(now.year(), month, d).ok();
    let date = match this_year {
        Some(date) if date <= now.date() => date,
        _ => time::Date::from_calendar_date(now.year() - 1, month, d).ok()?,
    };
    at(date, h, m)
}

/// The forum's wall clock at `secs` (Unix seconds), `offset_minutes` east
/// of UTC: the `now` relative times are read against.
pub fn local_clock(secs: i64, offset_minutes: i32) -> Option<time::PrimitiveDateTime> {
    let t = time::OffsetDateTime::from_unix_timestamp(secs.checked_add(i64::from(offset_minutes) * 60)?).ok()?;
    Some(time::PrimitiveDateTime::new(t.date(), t.time()))
}

/// Seconds since the Unix epoch as the forum's local wall-clock time,
/// `offset_minutes` east of UTC.
pub fn epoch_to_local(secs: i64, offset_minutes: i32) -> Option<String> {
    let t = time::OffsetDateTime::from_unix_timestamp(secs.checked_add(i64::from(offset_minutes) * 60)?).ok()?;
    Some(format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", t.year(), t.month() as u8, t.day(), t.hour(), t.minute(), t.second()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forum_shapes_normalize() {
        assert_eq!(normalize_time("发表于 2024-3-5 12:34").as_deref(), Some("2024-03-05T12:34:00"));
        assert_eq!(normalize_time("2024/03/05 08:01:09").as_deref(), Some("2024-03-05T08:01:09"));
        assert_eq!(normalize_time("發表於 2024年3月5日 9:07").as_deref(), Some("2024-03-05T09:07:00"));
        assert_eq!(normalize_time("2024-03-05").as_deref(), Some("2024-03-05T00:00:00"));
        assert_eq!(normalize_time("2024-02-30 10:00"), None);
        assert_eq!(normalize_time("昨天 10:00"), None);
    }

    #[test]
    fn relative_times_resolve_against_the_fetch_time() {
        let now = time::macros::datetime!(2024-12-01 10:00:30);
        let r = |t: &str| resolve_time(t, now);
        assert_eq!(r("刚刚").as_deref(), Some("2024-12-01T10:00:30"));
        assert_eq!(r("3分钟前").as_deref(), Some("2024-12-01T09:57:30"));
        assert_eq!(r("2小时前").as_deref(), Some("2024-12-01T08:00:30"));
        assert_eq!(r("今天 08:05").as_deref(), Some("2024-12-01T08:05:00"));
        assert_eq!(r("昨天 12:30").as_deref(), Some("2024-11-30T12:30:00"));
        assert_eq!(r("前天 23:59").as_deref(), Some("2024-11-29T23:59:00"));
        assert_eq!(r("11月28日 08:00").as_deref(), Some("2024-11-28T08:00:00"));
        assert_eq!(r("12-25 08:00").as_deref(), Some("2023-12-25T08:00:00"), "a day still to come this year is last year's");
        assert_eq!(r("2023-05-06 07:08").as_deref(), Some("2023-05-06T07:08:00"));
        assert_eq!(r("昨天 25:00"), None);
        assert_eq!(r("13月1日 08:00"), None);
        assert_eq!(r("不久以前"), None);
        let jan = time::macros::datetime!(2025-01-01 00:10:00);
        assert_eq!(resolve_time("昨天 23:50", jan).as_deref(), Some("2024-12-31T23:50:00"));
    }

    #[test]
    fn epochs_become_local_time() {
        assert_eq!(epoch_to_local(0, 480).as_deref(), Some("1970-01-01T08:00:00"));
        assert_eq!(epoch_to_local(1_733_018_400, 480).as_deref(), Some("2024-12-01T10:00:00"));
    }
}
