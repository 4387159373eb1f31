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
}
