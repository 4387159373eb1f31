//! Reading a request log for politeness: how many requests a host had in
//! flight at once and how close their arrivals came. The server's view is
//! the one that counts — it is what the forum's operator sees.

use std::time::Duration;

use crate::server::RequestRecord;

/// Most requests the server was busy with at the same moment, counting each
/// over `[since_start, end]`; one still in flight counts until now. A
/// request that ends exactly when another arrives does not overlap it.
pub fn max_concurrency(records: &[RequestRecord]) -> usize {
    busiest(records).0
}

/// [`max_concurrency`] and the requests in flight at its first peak, in
/// arrival order: what a failed check shows.
pub fn busiest(records: &[RequestRecord]) -> (usize, Vec<&RequestRecord>) {
    // (time, +1 arrival / -1 end, index); at equal times ends sort first.
    let mut events: Vec<(Duration, i32, usize)> = Vec::with_capacity(records.len() * 2);
    for (i, r) in records.iter().enumerate() {
        events.push((r.since_start, 1, i));
        events.push((r.end().unwrap_or(Duration::MAX), -1, i));
    }
    events.sort();
    let (mut now, mut most, mut peak) = (0i32, 0i32, Duration::ZERO);
    for (at, delta, _) in events {
        now += delta;
        if now > most {
            (most, peak) = (now, at);
        }
    }
    let mut open: Vec<&RequestRecord> = records.iter().filter(|r| r.since_start <= peak && r.end().is_none_or(|e| e > peak)).collect();
    open.sort_by_key(|r| (r.since_start, r.seq));
    (most.max(0) as usize, open)
}

/// The two arrivals that came closest together, as (gap, earlier, later);
/// `None` with fewer than two requests.
pub fn min_gap(records: &[RequestRecord]) -> Option<(Duration, RequestRecord, RequestRecord)> {
    let mut sorted: Vec<&RequestRecord> = records.iter().collect();
    sorted.sort_by_key(|r| (r.since_start, r.seq));
    sorted.windows(2).map(|w| (w[1].since_start - w[0].since_start, w[0], w[1])).min_by_key(|(gap, _, _)| *gap).map(|(gap, a, b)| (gap, a.clone(), b.clone()))
}

/// Requests that arrived while `after`'s `Retry-After` of `wait` was running:
/// after `after` ended (plus `grace` for requests already on their way) and
/// before `after`'s end + `wait`.
pub fn arrivals_during_retry_after<'a>(records: &'a [RequestRecord], after: &RequestRecord, wait: Duration, grace: Duration) -> Vec<&'a RequestRecord> {
    let Some(end) = after.end() else { return Vec::new() };
    records.iter().filter(|r| r.seq != after.seq && r.since_start > end + grace && r.since_start < end + wait).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn rec(seq: u64, start_ms: u64, end_ms: Option<u64>) -> RequestRecord {
        RequestRecord {
            seq,
            at: Instant::now(),
            since_start: Duration::from_millis(start_ms),
            received: std::time::SystemTime::UNIX_EPOCH + Duration::from_millis(start_ms),
            done: end_ms.map(Duration::from_millis),
            ended: end_ms.map(Duration::from_millis),
            method: "GET".into(),
            path_and_query: format!("/{seq}"),
            host: Some("h".into()),
            user_agent: None,
            status: 200,
            fault: None,
        }
    }

    #[test]
    fn concurrency_counts_overlaps_only() {
        assert_eq!(max_concurrency(&[]), 0);
        assert_eq!(max_concurrency(&[rec(0, 0, Some(10)), rec(1, 10, Some(20)), rec(2, 20, Some(30))]), 1, "touching is not overlapping");
        assert_eq!(max_concurrency(&[rec(0, 0, Some(10)), rec(1, 5, Some(20)), rec(2, 9, Some(30)), rec(3, 25, Some(26))]), 3);
        assert_eq!(max_concurrency(&[rec(0, 0, None), rec(1, 100, Some(200))]), 2, "in flight counts until now");
        let log = [rec(0, 0, Some(10)), rec(1, 5, Some(8)), rec(2, 9, Some(30)), rec(3, 12, Some(40)), rec(4, 25, Some(26))];
        let (most, open) = busiest(&log);
        assert_eq!((most, open.iter().map(|r| r.seq).collect::<Vec<_>>()), (3, vec![2, 3, 4]), "the first peak's requests");
    }

    #[test]
    fn gaps_are_between_consecutive_arrivals() {
        assert!(min_gap(&[rec(0, 0, Some(1))]).is_none());
        let (gap, a, b) = min_gap(&[rec(0, 0, Some(1)), rec(1, 100, Some(101)), rec(2, 130, Some(131)), rec(3, 50, Some(51))]).unwrap();
        assert_eq!((gap, a.seq, b.seq), (Duration::from_millis(30), 1, 2));
    }

    #[test]
    fn retry_after_window() {
        let log = [rec(0, 0, Some(10)), rec(1, 11, Some(12)), rec(2, 500, Some(501)), rec(3, 1015, Some(1016))];
        let inside = arrivals_during_retry_after(&log, &log[0], Duration::from_secs(1), Duration::ZERO);
        assert_eq!(inside.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2]);
        let inside = arrivals_during_retry_after(&log, &log[0], Duration::from_secs(1), Duration::from_millis(5));
        assert_eq!(inside.iter().map(|r| r.seq).collect::<Vec<_>>(), [2]);
    }
}
