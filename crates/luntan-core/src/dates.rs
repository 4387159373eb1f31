//! Forum timestamps, which come in many shapes (`2024-3-5 12:34`,
//! `2024/03/05 12:34:56`, `2024年3月5日 12:34`, `發表於 2024-03-05`,
//! `2024-03-05T04:34:00.000Z` in a `title` for scripts, `1709613240` in a
//! `data-time`), turned into one: `YYYY-MM-DDTHH:MM:SS`, the forum's local
//! wall-clock time.
//!
//! A time that names its zone (`Z`, `+00:00`, `UTC`) is moved to the
//! forum's wall clock ([`Clock::offset_minutes`]); one that names none is
//! taken as already on it, as forums write them.

use std::sync::OnceLock;

use regex::Regex;

fn pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // The time may be in twelve hours: a Chinese word before it
        // (WordPress's zh_CN `2024年3月5日 下午2:30`), or am/pm after it.
        Regex::new(concat!(
            r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?",
            r"(?:[\sT]*(上午|下午|中午|晚上|傍晚|凌晨|早上)?\s*(\d{1,2})\s*[:：时]\s*(\d{1,2})(?:\s*[:：分]\s*(\d{1,2}))?(?:\s*([AaPp])\.?[Mm]\b\.?)?)?"
        ))
        .expect("static date pattern")
    })
}

/// The wall clock a forum's times are read on: its offset east of UTC
/// and, when the page's fetch time was kept, that time on it (what
/// relative times such as `3分钟前` count back from).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub offset_minutes: i32,
    pub now: Option<time::PrimitiveDateTime>,
    /// How the forum writes times where no usual shape reads them
    /// (`<thread time-format="%m-%d-%Y, %I:%M %p">`): tried first.
    pub format: Option<&'static TimeFormat>,
}

impl Clock {
    /// China's wall clock (+08:00), the site files' default, with no fetch time.
    pub const CHINA: Clock = Clock { offset_minutes: 480, now: None, format: None };

    pub fn new(offset_minutes: i32, now: Option<time::PrimitiveDateTime>) -> Clock {
        Clock { offset_minutes, now, format: None }
    }

    /// This clock, reading times by `format` first.
    pub fn with_format(self, format: Option<&'static TimeFormat>) -> Clock {
        Clock { format, ..self }
    }

    /// A time as a page's text shows it: absolute (moved to this clock
    /// when it names a zone), else relative to the fetch time when known.
    pub fn read(self, text: &str) -> Option<String> {
        self.absolute(text).or_else(|| self.relative(text))
    }

    /// Only an absolute time: by the forum's `time-format` where it has
    /// one and it matches, else `2024-3-5 12:34`, ISO with or without a zone…
    pub fn absolute(self, text: &str) -> Option<String> {
        self.format.and_then(|f| f.read(text)).or_else(|| normalize_time_in(text, self.offset_minutes))
    }

    /// Only a time relative to the fetch (`3分钟前`, `昨天 12:30`, `3 天前`);
    /// `None` without a fetch time.
    pub fn relative(self, text: &str) -> Option<String> {
        self.now.and_then(|now| resolve_relative(text, now))
    }

    /// An attribute's value: Unix seconds or milliseconds (a `data-time`
    /// of 10 or 13 digits between 2000 and 2100), else as [`Clock::read`].
    pub fn attribute(self, value: &str) -> Option<String> {
        let v = value.trim();
        if (v.len() == 10 || v.len() == 13) && v.bytes().all(|b| b.is_ascii_digit()) {
            let secs = v.parse::<i64>().ok()? / if v.len() == 13 { 1000 } else { 1 };
            // 2000-01-01 .. 2100-01-01: a number outside is an id, not a time.
            return (946_684_800..4_102_444_800).contains(&secs).then(|| epoch_to_local(secs, self.offset_minutes)).flatten();
        }
        self.read(v)
    }
}

/// The first date (and time) found in `text`, normalized; `None` when there is none
/// or it is not a real calendar date. A zone after it is read as
/// [`normalize_time_in`] reads it, for a forum on China's clock.
pub fn normalize_time(text: &str) -> Option<String> {
    normalize_time_in(text, Clock::CHINA.offset_minutes)
}

/// [`normalize_time`] for a forum `offset_minutes` east of UTC: a time
/// followed by a zone (`Z`, `+00:00`, `-0500`, ` UTC`, ` GMT+8`; after
/// optional fractional seconds) is moved from that zone to the forum's.
pub fn normalize_time_in(text: &str, offset_minutes: i32) -> Option<String> {
    let f = numeric(text).or_else(|| named_month(text))?;
    let month = time::Month::try_from(u8::try_from(f.mo).ok()?).ok()?;
    let date = time::Date::from_calendar_date(f.y as i32, month, u8::try_from(f.d).ok()?).ok()?;
    let (h, mi, s) = f.hms.unwrap_or((0, 0, 0));
    if h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let (y, mo, d) = (f.y, f.mo, f.d);
    let zone = f.hms.and_then(|_| zone_after(&text[f.end..]));
    match zone {
        Some(zone) if zone != offset_minutes => {
            let t = time::PrimitiveDateTime::new(date, time::Time::from_hms(h as u8, mi as u8, s as u8).ok()?);
            let shifted = t.checked_add(time::Duration::minutes(i64::from(offset_minutes - zone)))?;
            Some(format_local(shifted))
        }
        _ => Some(format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}")),
    }
}

/// How a forum writes its times, where none of the usual shapes reads
/// them (a day before the month, `05/03/2025`; vBulletin's
/// `03-05-2024, 02:30 PM`): a site file's `time-format`, strftime's
/// directives `%Y` `%y` `%m` `%d` `%H` `%I` `%M` `%S` `%p` (AM/PM, 上午/下午)
/// `%b` (a month's name, English or 一月 … 十二月) `%%`; white space
/// matches any run of it, anything else itself. Found anywhere in the text.
#[derive(Debug)]
pub struct TimeFormat {
    source: String,
    regex: Regex,
}

impl PartialEq for TimeFormat {
    fn eq(&self, other: &TimeFormat) -> bool {
        self.source == other.source
    }
}

impl Eq for TimeFormat {}

/// What is wrong with a `time-format` (`%Y年%m月%d日 %H:%M`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeFormatError {
    #[error("a % at the end (write %% for a percent sign)")]
    PercentAtEnd,
    #[error("%{0} is not one of %Y %y %m %d %H %I %M %S %p %b %%")]
    Unknown(char),
    #[error("%{0} twice")]
    Twice(char),
    #[error("needs a year (%Y or %y), a month (%m or %b) and a day (%d)")]
    NoDate,
    #[error("%I (an hour of twelve) goes with %p (AM or PM), %H without")]
    TwelveHours,
    /// The pattern made from it does not compile (a regex limit).
    #[error("{0}")]
    Pattern(String),
}

impl TimeFormat {
    /// The format compiled, once per process for each text (site files
    /// name a handful): a [`Clock`] stays `Copy`.
    pub fn intern(format: &str) -> Result<&'static TimeFormat, TimeFormatError> {
        static SEEN: OnceLock<std::sync::Mutex<std::collections::HashMap<String, &'static TimeFormat>>> = OnceLock::new();
        let mut seen = SEEN.get_or_init(Default::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(f) = seen.get(format) {
            return Ok(f);
        }
        let f: &'static TimeFormat = Box::leak(Box::new(TimeFormat::parse(format)?));
        seen.insert(format.to_owned(), f);
        Ok(f)
    }

    fn parse(format: &str) -> Result<TimeFormat, TimeFormatError> {
        let mut re = String::from("(?i)");
        let mut seen = std::collections::HashSet::new();
        let mut chars = format.trim().chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_whitespace() {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                re.push_str(r"\s+");
                continue;
            }
            if c != '%' {
                re.push_str(&regex::escape(&c.to_string()));
                continue;
            }
            let d = chars.next().ok_or(TimeFormatError::PercentAtEnd)?;
            let part = match d {
                'Y' => r"(?P<Y>\d{4})",
                'y' => r"(?P<y>\d{2})",
                'm' => r"(?P<m>\d{1,2})",
                'd' => r"(?P<d>\d{1,2})",
                'H' => r"(?P<H>\d{1,2})",
                'I' => r"(?P<I>\d{1,2})",
                'M' => r"(?P<M>\d{2})",
                'S' => r"(?P<S>\d{2})",
                'p' => r"(?P<p>[ap]\.?m\.?|上午|下午)",
                'b' | 'B' => r"(?P<b>(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?|(?:十[一二]?|[一二三四五六七八九])月)",
                '%' => "%",
                other => return Err(TimeFormatError::Unknown(other)),
            };
            if d != '%' && !seen.insert(if d == 'B' { 'b' } else { d }) {
                return Err(TimeFormatError::Twice(d));
            }
            re.push_str(part);
        }
        let has = |any: &[char]| any.iter().any(|c| seen.contains(c));
        if !(has(&['Y', 'y']) && has(&['m', 'b']) && has(&['d'])) {
            return Err(TimeFormatError::NoDate);
        }
        if seen.contains(&'I') != seen.contains(&'p') {
            return Err(TimeFormatError::TwelveHours);
        }
        let regex = Regex::new(&re).map_err(|e| TimeFormatError::Pattern(e.to_string()))?;
        Ok(TimeFormat { source: format.to_owned(), regex })
    }

    /// The first time in `text` written this way, normalized; `None` where
    /// there is none or it is no real date.
    pub fn read(&self, text: &str) -> Option<String> {
        let c = self.regex.captures(text)?;
        let num = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<u32>().ok());
        let y = num("Y").or_else(|| num("y").map(|y| 2000 + y))?;
        let mo = match (num("m"), c.name("b")) {
            (Some(m), _) => m,
            (None, Some(b)) => month_number(b.as_str())?,
            (None, None) => return None,
        };
        let d = num("d")?;
        let h = match (num("H"), num("I"), c.name("p")) {
            (Some(h), _, _) => h,
            (None, Some(h), Some(p)) => {
                let p = p.as_str().to_ascii_lowercase();
                twelve_hour(h, p.starts_with('p') || p == "下午")
            }
            _ => 0,
        };
        let (mi, sec) = (num("M").unwrap_or(0), num("S").unwrap_or(0));
        let month = time::Month::try_from(u8::try_from(mo).ok()?).ok()?;
        time::Date::from_calendar_date(i32::try_from(y).ok()?, month, u8::try_from(d).ok()?).ok()?;
        (h <= 23 && mi <= 59 && sec <= 59).then(|| format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{sec:02}"))
    }
}

/// A month's name (`Mar`, `March`, `三月`) as its number.
fn month_number(name: &str) -> Option<u32> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if let Some(zh) = name.strip_suffix('月') {
        let digit = |ch: char| "一二三四五六七八九".chars().position(|d| d == ch).map(|i| i as u32 + 1);
        return match zh {
            "十" => Some(10),
            "十一" => Some(11),
            "十二" => Some(12),
            one => digit(one.chars().next()?),
        };
    }
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].iter().position(|m| name.starts_with(m)).map(|i| i as u32 + 1)
}

/// A date and time as found in text, not yet checked.
struct Found {
    y: u32,
    mo: u32,
    d: u32,
    hms: Option<(u32, u32, u32)>,
    /// Where the match ends: a zone may follow.
    end: usize,
}

/// `2024-3-5 12:34`, `2024/03/05`, `2024年3月5日 12:34`, ISO, and
/// `2024年3月5日 下午2:30`, `2024-03-05 02:30 PM`.
fn numeric(text: &str) -> Option<Found> {
    let c = pattern().captures(text)?;
    let num = |i: usize| c.get(i).map(|m| m.as_str().parse::<u32>().unwrap_or(99));
    let hms = num(5).map(|h| {
        let h = match (c.get(4), c.get(8)) {
            (Some(word), _) => chinese_hour(h, word.as_str()),
            (None, Some(ap)) => twelve_hour(h, ap.as_str().eq_ignore_ascii_case("p")),
            (None, None) => h,
        };
        (h, num(6).unwrap_or(0), num(7).unwrap_or(0))
    });
    Some(Found { y: num(1)?, mo: num(2)?, d: num(3)?, hms, end: c.get(0)?.end() })
}

/// An hour on a twelve-hour clock with am or pm after it (`12:34 am` is
/// 00:34); an hour past 12, or 0, is no pm hour (99), and stays as it is
/// before am.
fn twelve_hour(h: u32, pm: bool) -> u32 {
    match (h > 12 || h == 0, pm) {
        (true, true) => 99,
        (true, false) => h,
        (false, true) => h % 12 + 12,
        (false, false) => h % 12,
    }
}

/// An hour after a Chinese word for the part of the day: 下午 (afternoon),
/// 晚上 and 傍晚 (evening) are past noon, 中午 (noon) is from 11 to 13
/// o'clock, 上午, 早上 and 凌晨 before noon; an hour already past 12 stays.
fn chinese_hour(h: u32, word: &str) -> u32 {
    match word {
        "下午" | "晚上" | "傍晚" if h < 12 => h + 12,
        "中午" if h < 11 => h + 12,
        "上午" | "早上" | "凌晨" if h == 12 => 0,
        _ => h,
    }
}

/// Month names, as forums in English templates write dates (FlaskBB
/// `23 January 2025 - 06:18`, phpBB `Tue Mar 05, 2024 12:34 pm`,
/// `Jan 5th, 2025 at 6:18 PM`, `Dec 11 2024`), and as Django's Chinese
/// catalogue names months in those same orders (pybbm `05 三月, 2025 09:07`,
/// `三月 5, 2025`).
fn named_month(text: &str) -> Option<Found> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        let month =
            |at: &str| format!(r"(?:(?P<en{at}>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?|(?P<zh{at}>十[一二]?|[一二三四五六七八九])月)");
        // A year in full, or its last two digits after an apostrophe
        // (HyperKitty's `17 九月 '26`, English `Jun 5 '25`).
        let year = |at: &str| format!(r"(?:(?P<y{at}>\d{{4}})|['’](?P<yy{at}>\d{{2}})\b)");
        let time = r"(?:\s*(?:,|-|–|@|at)?\s*(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?(?:\s*(?P<ap>[ap])\.?m\.?)?)?";
        Regex::new(&format!(
            r"(?i)\b(?:(?P<d1>\d{{1,2}})\s+{},?\s+{}|{}\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+{}){time}",
            month("1"),
            year("1"),
            month("2"),
            year("2")
        ))
        .expect("static month-name date pattern")
    });
    let c = re.captures(text)?;
    let num = |name: &str| c.name(name).map(|m| m.as_str().parse::<u32>().unwrap_or(99));
    let mo = match c.name("en1").or(c.name("en2")) {
        Some(en) => month_number(en.as_str())?,
        None => month_number(&format!("{}月", c.name("zh1").or(c.name("zh2"))?.as_str()))?,
    };
    // Two digits of a year as POSIX's `%y` reads them: 69–99 the 1900s, the rest the 2000s.
    let year = |at: &str| num(&format!("y{at}")).or_else(|| num(&format!("yy{at}")).map(|yy| if yy >= 69 { 1900 + yy } else { 2000 + yy }));
    let (d, y) = match num("d1") {
        Some(d) => (d, year("1")?),
        None => (num("d2")?, year("2")?),
    };
    let hms = num("h").map(|h| {
        let h = c.name("ap").map_or(h, |ap| twelve_hour(h, ap.as_str().eq_ignore_ascii_case("p")));
        (h, num("mi").unwrap_or(0), num("s").unwrap_or(0))
    });
    Some(Found { y, mo, d, hms, end: c.get(0)?.end() })
}

/// The zone a time names right after it, in minutes east of UTC.
fn zone_after(rest: &str) -> Option<i32> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        // ISO's `Z` and `+08:00`/`+0800` only right after the time; a
        // sign after a space is text ("12:34 +1"), unless UTC/GMT says so.
        Regex::new(r"^(?:\.\d+)?(?:(Z)\b|([+-])(\d{2}):?(\d{2})\b|\s*(?:UTC|GMT)(?:([+-])(\d{1,2})(?::?(\d{2}))?)?\b)").expect("static zone pattern")
    });
    let c = re.captures(rest)?;
    if c.get(1).is_some() {
        return Some(0);
    }
    let (sign, h, m) = match (c.get(2), c.get(5)) {
        (Some(sign), _) => (sign.as_str(), &c[3], c.get(4).map_or("0", |m| m.as_str())),
        (None, Some(sign)) => (sign.as_str(), &c[6], c.get(7).map_or("0", |m| m.as_str())),
        (None, None) => return Some(0),
    };
    let (h, m) = (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?);
    if h > 14 || m > 59 {
        return None;
    }
    Some(if sign == "-" { -(h * 60 + m) } else { h * 60 + m })
}

fn format_local(t: time::PrimitiveDateTime) -> String {
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", t.year(), t.month() as u8, t.day(), t.hour(), t.minute(), t.second())
}

/// A forum time written relative to the moment the page was fetched, as
/// microblogs write it (`刚刚`, `3分钟前`, `2小时前`, `3 天前`, `2 周前`,
/// `今天 08:00`, `昨天 12:30`, `前天 12:30`, `11月28日 08:00`, `11-28 08:00`).
/// `now` is the fetch time in the forum's local wall clock; the result is
/// normalized like [`normalize_time`]'s. ([`Clock::read`] tries these
/// after the absolute shapes.)
fn resolve_relative(text: &str, now: time::PrimitiveDateTime) -> Option<String> {
    static RELATIVE: OnceLock<Regex> = OnceLock::new();
    let re = RELATIVE.get_or_init(|| {
        Regex::new(
            r"^\s*(?:(刚刚)|(\d+|半)\s*个?\s*(秒|分钟|小时|天|周|星期)前|(今天|昨天|前天)\s*(\d{1,2})[:：](\d{2})|(\d{1,2})(?:月|-)(\d{1,2})日?(?:\s+(\d{1,2})[:：](\d{2}))?)\s*$",
        )
        .expect("static relative-time pattern")
    });
    let fmt = format_local;
    let c = re.captures(text)?;
    let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<i64>().ok());
    let at = |date: time::Date, h: i64, m: i64| -> Option<String> {
        let t = time::Time::from_hms(u8::try_from(h).ok()?, u8::try_from(m).ok()?, 0).ok()?;
        Some(fmt(time::PrimitiveDateTime::new(date, t)))
    };
    if c.get(1).is_some() {
        return Some(fmt(now));
    }
    if let (Some(n), Some(unit)) = (c.get(2), c.get(3)) {
        // Discuz!'s "半小时前": half of the unit.
        let seconds_each = match unit.as_str() {
            "秒" => 1,
            "分钟" => 60,
            "小时" => 3600,
            "天" => 86_400,
            _ => 7 * 86_400,
        };
        let back = match n.as_str() {
            "半" => seconds_each / 2,
            n => n.parse::<i64>().ok()?.checked_mul(seconds_each)?,
        };
        return now.checked_sub(time::Duration::seconds(back)).map(fmt);
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

/// The finer of two readings of one time: a day alone in an element's
/// text (Spirit's `17 七月 '25`, read as midnight) gives way to a `title`
/// that names the same day with its hour (`2025年7月17日 23:00`); a title
/// of another day does not override the text.
///
/// ```
/// use luntan_core::dates::finer;
/// assert_eq!(finer("2025-07-17T00:00:00".into(), Some("2025-07-17T23:00:00".into())), "2025-07-17T23:00:00");
/// assert_eq!(finer("2025-07-17T00:00:00".into(), Some("2025-07-19T08:00:00".into())), "2025-07-17T00:00:00");
/// ```
pub fn finer(text: String, title: Option<String>) -> String {
    match title {
        Some(t) if text.ends_with("T00:00:00") && t.get(..10) == text.get(..10) => t,
        _ => text,
    }
}

/// Seconds since the Unix epoch as the forum's local wall-clock time,
/// `offset_minutes` east of UTC.
pub fn epoch_to_local(secs: i64, offset_minutes: i32) -> Option<String> {
    local_clock(secs, offset_minutes).map(format_local)
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
        let r = |t: &str| Clock::new(480, Some(now)).read(t);
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
        assert_eq!(Clock::new(480, Some(jan)).read("昨天 23:50").as_deref(), Some("2024-12-31T23:50:00"));
    }

    #[test]
    fn english_month_names_read() {
        let n = |t: &str| normalize_time(t);
        assert_eq!(n("23 January 2025 - 06:18").as_deref(), Some("2025-01-23T06:18:00"), "FlaskBB");
        assert_eq!(n("Tue Mar 05, 2024 12:34 pm").as_deref(), Some("2024-03-05T12:34:00"), "phpBB");
        assert_eq!(n("Tue Mar 05, 2024 12:34 am").as_deref(), Some("2024-03-05T00:34:00"));
        assert_eq!(n("Mar 5, 2024 1:07 PM").as_deref(), Some("2024-03-05T13:07:00"));
        assert_eq!(n("Jan 5th, 2025 at 6:18 p.m.").as_deref(), Some("2025-01-05T18:18:00"));
        assert_eq!(n("September 30 2024 23:59:58").as_deref(), Some("2024-09-30T23:59:58"));
        assert_eq!(n("Dec 11 2024").as_deref(), Some("2024-12-11T00:00:00"));
        assert_eq!(n("31 February 2024 10:00"), None);
        assert_eq!(n("13:00 pm, Mar 5 2024").as_deref(), Some("2024-03-05T00:00:00"), "a time before the date is not its time");
        assert_eq!(n("Mar 5, 2024 13:07 pm"), None, "13 pm is no hour");
        assert_eq!(n("the march of 2024 soldiers"), None);
        assert_eq!(n("2024-03-05 12:34 and Mar 6, 2024").as_deref(), Some("2024-03-05T12:34:00"), "numeric first");
    }

    /// A site file's `time-format` for what no usual shape reads: a day
    /// before its month, vBulletin's US order with AM/PM, a two-digit year.
    #[test]
    fn a_time_format_reads_the_orders_no_usual_shape_does() {
        let f = |fmt: &str| TimeFormat::intern(fmt).unwrap();
        assert_eq!(normalize_time("05/03/2025 09:07"), None, "no usual shape reads it");
        assert_eq!(f("%d/%m/%Y %H:%M").read("发表于 05/03/2025 09:07").as_deref(), Some("2025-03-05T09:07:00"));
        assert_eq!(f("%m-%d-%Y, %I:%M %p").read("03-05-2024, 02:30 PM").as_deref(), Some("2024-03-05T14:30:00"));
        assert_eq!(f("%m-%d-%Y, %I:%M %p").read("12-31-2024,  12:05   am").as_deref(), Some("2024-12-31T00:05:00"), "any white space");
        assert_eq!(f("%d.%m.%y").read("31.12.24").as_deref(), Some("2024-12-31T00:00:00"));
        assert_eq!(f("%d %b %Y %H:%M").read("05 三月 2025 09:07").as_deref(), Some("2025-03-05T09:07:00"));
        assert_eq!(f("%d/%m/%Y %H:%M").read("31/02/2025 09:07"), None, "no such day");
        assert_eq!(f("%d/%m/%Y %H:%M").read("没有时间"), None);
        assert!(std::ptr::eq(f("%d/%m/%Y %H:%M"), f("%d/%m/%Y %H:%M")), "compiled once");
        let clock = Clock::CHINA.with_format(Some(f("%d/%m/%Y %H:%M")));
        assert_eq!(clock.read("05/03/2025 09:07").as_deref(), Some("2025-03-05T09:07:00"));
        assert_eq!(clock.read("2025-03-06 10:00").as_deref(), Some("2025-03-06T10:00:00"), "the usual shapes after it");
        for (bad, why) in [("%Y-%m", "a day"), ("%Y-%m-%d %I:%M", "%p"), ("%Y-%m-%d %Q", "%Q"), ("%Y-%m-%d %d", "twice"), ("%Y-%m-%d %", "at the end")] {
            let e = TimeFormat::intern(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    /// WordPress's zh_CN time format is `下午2:30`, and some boards write
    /// `02:30 PM`: the twelve-hour clock read as such (the time was lost,
    /// or 14:30 read as 02:30).
    #[test]
    fn twelve_hour_times_read_with_their_part_of_the_day() {
        let n = |t: &str| normalize_time(t);
        assert_eq!(n("2024年3月5日 下午2:30").as_deref(), Some("2024-03-05T14:30:00"), "WordPress zh_CN");
        assert_eq!(n("2024-03-05 上午 10:05").as_deref(), Some("2024-03-05T10:05:00"));
        assert_eq!(n("2024-03-05 晚上11:59").as_deref(), Some("2024-03-05T23:59:00"));
        assert_eq!(n("2024-03-05 中午12:10").as_deref(), Some("2024-03-05T12:10:00"));
        assert_eq!(n("2024-03-05 中午1:10").as_deref(), Some("2024-03-05T13:10:00"));
        assert_eq!(n("2024-03-05 凌晨12:30").as_deref(), Some("2024-03-05T00:30:00"));
        assert_eq!(n("2024-03-05 下午 14:30").as_deref(), Some("2024-03-05T14:30:00"), "a 24-hour time after 下午 stays");
        assert_eq!(n("2024-03-05 02:30 PM").as_deref(), Some("2024-03-05T14:30:00"));
        assert_eq!(n("2024/3/5 12:05 am").as_deref(), Some("2024-03-05T00:05:00"));
        assert_eq!(n("2024-03-05 13:30 pm"), None, "13 pm is no hour");
        assert_eq!(n("2024-03-05 12:34 Posted by").as_deref(), Some("2024-03-05T12:34:00"));
        let now = time::macros::datetime!(2024-12-01 10:00:00);
        let r = |t: &str| Clock::new(480, Some(now)).read(t);
        assert_eq!(r("半小时前").as_deref(), Some("2024-12-01T09:30:00"), "Discuz!");
        assert_eq!(r("1 个小时前").as_deref(), Some("2024-12-01T09:00:00"));
        assert_eq!(r("2 星期前").as_deref(), Some("2024-11-17T10:00:00"));
        assert_eq!(r("半天前").as_deref(), Some("2024-11-30T22:00:00"));
    }

    /// Django's Chinese catalogue names months 一月 … 十二月 in the orders
    /// its English one writes them: pybbm's `05 三月, 2025 09:07` read as no
    /// time at all, so no thread of a pybbm forum had a post time.
    #[test]
    fn chinese_month_names_in_djangos_orders_read() {
        let n = |t: &str| normalize_time(t);
        assert_eq!(n("05 三月, 2025 09:07").as_deref(), Some("2025-03-05T09:07:00"), "pybbm");
        assert_eq!(n("已编辑 28 十二月, 2024 23:59").as_deref(), Some("2024-12-28T23:59:00"), "an edit note");
        assert_eq!(n("1 十月, 2025 08:00").as_deref(), Some("2025-10-01T08:00:00"));
        assert_eq!(n("30 十一月, 2025 12:00").as_deref(), Some("2025-11-30T12:00:00"));
        assert_eq!(n("三月 5, 2025").as_deref(), Some("2025-03-05T00:00:00"), "N j, Y");
        assert_eq!(n("十一月 2025"), None, "a month archive is no date");
        assert_eq!(n("十一月 '25"), None, "a month archive is no date");
        assert_eq!(n("25 六月"), None, "no year");
        assert_eq!(n("31 二月, 2024 10:00"), None);
    }

    /// HyperKitty draws a mail's day twice, `18 四月 2026` for wide
    /// screens and `18 四月 '26` for narrow ones; the second read as no
    /// date, so its text weighed as the mail's words, and on pages of two
    /// mails it was taken for the sender's name (shorter than an address).
    #[test]
    fn a_year_of_two_digits_after_an_apostrophe_reads() {
        let n = |t: &str| normalize_time(t);
        assert_eq!(n("18 四月 '26").as_deref(), Some("2026-04-18T00:00:00"));
        assert_eq!(n("18 四月\n                '26\n").as_deref(), Some("2026-04-18T00:00:00"), "across lines");
        assert_eq!(n("Jun 5 ’25 at 6:18 PM").as_deref(), Some("2025-06-05T18:18:00"));
        assert_eq!(n("3 Mar '98").as_deref(), Some("1998-03-03T00:00:00"), "POSIX %y: 69-99 the 1900s");
        assert_eq!(n("3 Mar '250"), None, "three digits are no year");
        assert_eq!(n("3 Mar 25"), None, "two digits without the apostrophe are a count");
        assert_eq!(n("31 二月 '24"), None);
    }

    #[test]
    fn zoned_times_move_to_the_forums_clock() {
        // NodeBB's `title="…Z"`, phpBB's `datetime="…+00:00"`.
        assert_eq!(normalize_time("2024-03-05T04:34:00.000Z").as_deref(), Some("2024-03-05T12:34:00"));
        assert_eq!(normalize_time("2024-03-05T04:34:00+00:00").as_deref(), Some("2024-03-05T12:34:00"));
        assert_eq!(normalize_time("2024-03-05T12:34:00+08:00").as_deref(), Some("2024-03-05T12:34:00"));
        assert_eq!(normalize_time("2024-03-05T20:34:00-0500").as_deref(), Some("2024-03-06T09:34:00"));
        assert_eq!(normalize_time("2024-03-05 04:34 UTC").as_deref(), Some("2024-03-05T12:34:00"));
        assert_eq!(normalize_time("2024-03-05 12:34 GMT+8").as_deref(), Some("2024-03-05T12:34:00"));
        assert_eq!(normalize_time_in("2024-03-05T04:34:00Z", 0).as_deref(), Some("2024-03-05T04:34:00"));
        assert_eq!(normalize_time_in("2024-12-31T20:00:00Z", 540).as_deref(), Some("2025-01-01T05:00:00"));
        // A sign after a space is text, not a zone; a date alone has none.
        assert_eq!(normalize_time("2024-03-05 12:34 +1").as_deref(), Some("2024-03-05T12:34:00"));
        assert_eq!(normalize_time("2024-03-05Z").as_deref(), Some("2024-03-05T00:00:00"));
    }

    #[test]
    fn attributes_read_epochs_and_text_prefers_absolute_times() {
        let now = time::macros::datetime!(2024-12-01 10:00:30);
        let c = Clock::new(480, Some(now));
        assert_eq!(c.attribute("1733018400").as_deref(), Some("2024-12-01T10:00:00"));
        assert_eq!(c.attribute("1733018400123").as_deref(), Some("2024-12-01T10:00:00"));
        assert_eq!(c.attribute("12345"), None, "an id, not a time");
        assert_eq!(c.attribute("9999999999"), None, "past 2100");
        assert_eq!(c.attribute("2024-03-05T04:34:00Z").as_deref(), Some("2024-03-05T12:34:00"));
        assert_eq!(c.read("3 天前").as_deref(), Some("2024-11-28T10:00:30"));
        assert_eq!(c.read("2周前").as_deref(), Some("2024-11-17T10:00:30"));
        assert_eq!(c.absolute("3 天前"), None);
        assert_eq!(Clock::CHINA.read("3 天前"), None, "no fetch time, nothing to count back from");
        assert_eq!(c.read("2023-05-06 07:08").as_deref(), Some("2023-05-06T07:08:00"));
    }

    #[test]
    fn epochs_become_local_time() {
        assert_eq!(epoch_to_local(0, 480).as_deref(), Some("1970-01-01T08:00:00"));
        assert_eq!(epoch_to_local(1_733_018_400, 480).as_deref(), Some("2024-12-01T10:00:00"));
    }
}
