//! The media archive's rows (`luntan-media`): per forum and URL, the
//! content hash its file is stored under, or why it is not kept.

use super::sql::vals;
use super::{Store, StoreError};

/// One picture or attachment URL and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaRow {
    pub site: crate::ids::SiteId,
    pub url: String,
    /// Lower-case hex SHA-256 of the content (archived rows only).
    pub sha256: Option<String>,
    /// The served `Content-Type`'s type and subtype (archived rows only).
    pub content_type: Option<String>,
    pub bytes: Option<i64>,
    pub status: MediaStatus,
    /// Why it is not kept (failed rows only): one line, without the URL.
    pub reason: Option<String>,
    /// RFC 3339 UTC.
    pub fetched_at: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaStatus {
    Archived,
    Failed,
}

impl MediaStatus {
    fn as_str(self) -> &'static str {
        match self {
            MediaStatus::Archived => "archived",
            MediaStatus::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Result<MediaStatus, super::DbError> {
        match s {
            "archived" => Ok(MediaStatus::Archived),
            "failed" => Ok(MediaStatus::Failed),
            other => Err(super::DbError::Value(format!("media status {other:?}"))),
        }
    }
}

/// A forum's media archive in numbers (`luntan-status`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct MediaCounts {
    /// URLs whose content is kept.
    pub archived: i64,
    /// Distinct contents those URLs hold: the files under `media/`.
    pub files: i64,
    /// The files' size, each content once.
    pub bytes: i64,
    /// URLs not kept (a 404, robots.txt, another host, the cap or the type).
    pub failed: i64,
}

impl Store {
    /// Per forum, what its media rows add up to; forums without rows are
    /// absent.
    pub(super) fn media_counts(&self) -> Result<std::collections::HashMap<String, MediaCounts>, StoreError> {
        let mut out: std::collections::HashMap<String, MediaCounts> = std::collections::HashMap::new();
        let rows =
            self.per_site("SELECT site, count(*) FILTER (WHERE status = 'archived'), count(*) FILTER (WHERE status = 'failed') FROM media GROUP BY site")?;
        for (site, archived, failed) in rows {
            out.insert(site, MediaCounts { archived, failed, ..MediaCounts::default() });
        }
        // Each content once, though many URLs show it. CAST: PostgreSQL
        // sums BIGINTs as NUMERIC.
        let rows = self.per_site(
            "SELECT site, count(*), CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM
               (SELECT DISTINCT site, sha256, bytes FROM media WHERE status = 'archived') m GROUP BY site",
        )?;
        for (site, files, bytes) in rows {
            let c = out.entry(site).or_default();
            (c.files, c.bytes) = (files, bytes);
        }
        Ok(out)
    }

    /// Every URL of `site` with a row, archived or failed: the ones a run
    /// does not fetch again.
    pub fn media_known(&self, site: &str) -> Result<std::collections::HashSet<String>, StoreError> {
        Ok(self.query("SELECT url FROM media WHERE site = ?1", vals![site], |r| r.get::<String>(0))?.into_iter().collect())
    }

    /// Records what became of one URL (replacing a row from before).
    pub fn media_record(&self, m: &MediaRow) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO media (site, url, sha256, content_type, bytes, status, reason, fetched_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT(site, url) DO UPDATE SET sha256 = excluded.sha256, content_type = excluded.content_type, bytes = excluded.bytes,
               status = excluded.status, reason = excluded.reason, fetched_at = excluded.fetched_at",
            vals![m.site.as_str(), m.url.as_str(), &m.sha256, &m.content_type, m.bytes, m.status.as_str(), &m.reason, m.fetched_at.as_str()],
        )
        .map(drop)
    }

    /// The rows of `site` (all forums without), by forum and URL.
    pub fn media_rows(&self, site: Option<&str>) -> Result<Vec<MediaRow>, StoreError> {
        let read = |r: &super::Row| {
            Ok(MediaRow {
                site: r.get(0)?,
                url: r.get(1)?,
                sha256: r.get(2)?,
                content_type: r.get(3)?,
                bytes: r.get(4)?,
                status: MediaStatus::parse(&r.get::<String>(5)?)?,
                reason: r.get(6)?,
                fetched_at: r.get(7)?,
            })
        };
        self.query(
            "SELECT site, url, sha256, content_type, bytes, status, reason, fetched_at FROM media
             WHERE CAST(?1 AS TEXT) IS NULL OR site = ?1 ORDER BY site, url",
            vals![site],
            read,
        )
    }

    /// The hash `url` of `site` is archived under, if it is.
    pub fn media_hash_of(&self, site: &str, url: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .query_first("SELECT sha256 FROM media WHERE site = ?1 AND url = ?2 AND status = 'archived'", vals![site, url], |r| r.get::<Option<String>>(0))?
            .flatten())
    }

    /// The content type an archived file was served with (any URL's), for
    /// serving it again; `None` when no archived row has this hash.
    pub fn media_type_of(&self, sha256: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .query_first("SELECT content_type FROM media WHERE sha256 = ?1 AND status = 'archived' ORDER BY site, url LIMIT 1", vals![sha256], |r| {
                r.get::<Option<String>>(0)
            })?
            .flatten())
    }

    /// Forgets the failed rows of `site` (all forums without), so the next
    /// run asks for them again; returns how many.
    pub fn media_retry_failed(&self, site: Option<&str>) -> Result<usize, StoreError> {
        self.exec("DELETE FROM media WHERE status = 'failed' AND (CAST(?1 AS TEXT) IS NULL OR site = ?1)", vals![site])
    }
}
