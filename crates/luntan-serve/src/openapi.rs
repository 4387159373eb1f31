//! The API described as OpenAPI 3.1. The integration tests validate real
//! responses against these schemas, and every object is closed
//! (`additionalProperties: false`), so a field added to a response and not
//! here, or described here and not sent, fails a test.

use serde_json::{json, Value};

/// The OpenAPI document served at `/api/openapi.json`.
pub fn openapi() -> Value {
    let q = |desc: &str, required: bool| json!({ "name": "q", "in": "query", "required": required, "description": desc, "schema": { "type": "string", "maxLength": crate::MAX_QUERY_BYTES } });
    let site = json!({ "name": "site", "in": "query", "description": "only this forum; repeat or separate with commas", "schema": { "type": "string" } });
    let err = json!({ "description": "error", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } });
    let ok =
        |schema: &str| json!({ "description": "OK", "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } } });
    let param = |name: &str, desc: &str, schema: Value| json!({ "name": name, "in": "query", "description": desc, "schema": schema });
    let ranges = json!({ "type": "array", "items": { "type": "array", "items": { "type": "integer", "minimum": 0 }, "minItems": 2, "maxItems": 2 } });
    let counts = json!({ "type": "object", "additionalProperties": { "type": "integer", "minimum": 0 } });
    let media_counts = json!({ "type": "object", "additionalProperties": false, "required": ["archived", "files", "bytes", "failed"],
        "description": "luntan-media's archive of the forum's pictures and attachments; absent where it never ran",
        "properties": { "archived": { "type": "integer", "minimum": 0, "description": "URLs whose content is kept" },
            "files": { "type": "integer", "minimum": 0, "description": "distinct contents, one file each" },
            "bytes": { "type": "integer", "minimum": 0, "description": "the files' size, each content once" },
            "failed": { "type": "integer", "minimum": 0, "description": "URLs not kept" } } });
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": { "title": "luntan search API", "version": env!("CARGO_PKG_VERSION"),
                  "description": "Read-only search over every crawled forum. Query syntax as luntan-search: words (AND), \"phrases\", -exclusions, OR, site: board: author: title:. Times are the forums' wall-clock times." },
        "paths": {
            "/api/search": { "get": {
                "summary": "Search every forum, one ranking",
                "parameters": [
                    q("the query", true), site.clone(),
                    param("board", "only this board", json!({ "type": "string" })),
                    param("author", "a poster's name contains this", json!({ "type": "string", "maxLength": 64 })),
                    param("since", "first post on or after (YYYY-MM-DD)", json!({ "type": "string", "format": "date" })),
                    param("until", "first post on or before (YYYY-MM-DD)", json!({ "type": "string", "format": "date" })),
                    param("sort", "order", json!({ "type": "string", "enum": ["relevance", "newest", "oldest"] })),
                    param("offset", "hits to skip", json!({ "type": "integer", "minimum": 0, "maximum": crate::MAX_OFFSET })),
                    param("limit", "hits to return", json!({ "type": "integer", "minimum": 0, "maximum": crate::MAX_LIMIT, "default": 10 })),
                    param("facets", "1: also count every matching thread (not only this page's) by forum, board, author, year and month, in `facets`", json!({ "type": "string", "enum": ["0", "1", "false", "true"], "default": "0" }))
                ],
                "responses": { "200": ok("SearchResults"), "400": err.clone(), "401": err.clone(), "503": err.clone() }
            }},
            "/api/thread/{site}/{id}": { "get": {
                "summary": "A whole thread from its XML",
                "parameters": [
                    { "name": "site", "in": "path", "required": true, "schema": { "type": "string" } },
                    { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }
                ],
                "responses": { "200": ok("Thread"), "401": err.clone(), "404": err.clone(), "503": err.clone() }
            }},
            "/api/trend": { "get": {
                "summary": "Matching threads (by first post) and their posts (by each post's time) per interval per forum, counted in the index",
                "parameters": [ q("the query", true), site,
                    param("board", "only this board", json!({ "type": "string" })),
                    param("author", "a poster's name contains this", json!({ "type": "string", "maxLength": 64 })),
                    param("since", "only threads first posted on or after this day (YYYY-MM-DD), and their posts from it", json!({ "type": "string", "format": "date" })),
                    param("until", "only threads first posted on or before this day (YYYY-MM-DD), and their posts up to it", json!({ "type": "string", "format": "date" })),
                    param("interval", "bucket width", json!({ "type": "string", "enum": ["day", "week", "month"], "default": "month" })) ],
                "responses": { "200": ok("Trend"), "400": err.clone(), "401": err.clone(), "503": err.clone() }
            }},
            "/api/status": { "get": {
                "summary": "What luntan-status --json prints: one element per forum",
                "responses": { "200": { "description": "OK", "content": { "application/json": { "schema": { "type": "array", "items": { "$ref": "#/components/schemas/SiteStatus" } } } } }, "401": err.clone(), "503": err.clone() }
            }},
            "/feed.atom": { "get": {
                "summary": "The newest matching threads as Atom (RFC 4287)",
                "parameters": [ q("the query", true) ],
                "responses": { "200": { "description": "OK", "content": { "application/atom+xml": {} } }, "400": err.clone() }
            }}
        },
        "components": { "schemas": {
            "Error": { "type": "object", "additionalProperties": false, "required": ["error", "status"], "properties": {
                "error": { "type": "string" }, "status": { "type": "integer" },
                "column": { "type": "integer", "minimum": 1, "description": "where in q a malformed query went wrong (1-based characters)" } } },
            "Hit": { "type": "object", "additionalProperties": false,
                "required": ["rank", "score", "site", "forum", "board", "thread", "url", "title", "title_html", "title_highlights", "posted", "saved", "authors", "replies", "snippet", "snippet_text", "highlights"],
                "properties": {
                    "rank": { "type": "integer", "minimum": 1 }, "score": { "type": "number" },
                    "site": { "type": "string" }, "forum": { "type": "string" }, "board": { "type": "string" }, "thread": { "type": "string" },
                    "url": { "type": "string" }, "title": { "type": "string" },
                    "title_html": { "type": "string", "description": "title, HTML-escaped, highlights in <b>" },
                    "title_highlights": ranges.clone(),
                    "posted": { "type": ["string", "null"] }, "saved": { "type": "string" },
                    "authors": { "type": "array", "items": { "type": "string" } },
                    "replies": { "type": "integer", "minimum": 0, "description": "posts after the first, counting those with text (a post of only an image or a quote is not in the index)" },
                    "snippet": { "type": "string", "description": "snippet_text, HTML-escaped, highlights in <b>" },
                    "snippet_text": { "type": "string" },
                    "highlights": { "description": "byte ranges into snippet_text", "type": ranges["type"], "items": ranges["items"] },
                    "in_quote": { "type": "boolean", "const": true, "description": "present when the query's words are in this thread only inside a quote of another's post: the snippet is the quote's" },
                    "quote_author": { "type": "string", "description": "with in_quote: whose words the quote holds, where known" } } },
            "SearchResults": { "type": "object", "additionalProperties": false,
                "required": ["hits", "total", "per_site", "offset", "limit", "returned", "took_ms", "skipped"],
                "properties": {
                    "hits": { "type": "array", "items": { "$ref": "#/components/schemas/Hit" } },
                    "total": { "type": "integer", "minimum": 0 }, "per_site": counts.clone(),
                    "offset": { "type": "integer" }, "limit": { "type": "integer" }, "returned": { "type": "integer" },
                    "took_ms": { "type": "number" },
                    "skipped": { "type": "array", "items": { "type": "string" }, "description": "indexes that could not be opened" },
                    "facets": { "$ref": "#/components/schemas/Facets" } } },
            "Trend": { "type": "object", "additionalProperties": false, "required": ["interval", "buckets", "series", "undated", "totals", "post_series", "post_totals", "took_ms"], "properties": {
                "interval": { "type": "string", "enum": ["day", "week", "month"] },
                "buckets": { "type": "array", "items": { "type": "string" }, "description": "each bucket's first day (YYYY-MM-DD; months YYYY-MM), oldest first: every bucket from the first to the last that counts anything, those between that count nothing included (0 in every series)" },
                "series": { "type": "object", "description": "per forum, matching threads by first post time, one count per bucket",
                    "additionalProperties": { "type": "array", "items": { "type": "integer", "minimum": 0 } } },
                "undated": counts.clone(), "totals": counts.clone(),
                "post_series": { "type": "object", "description": "per forum, the posts of the matching threads by each post's own time, one count per bucket",
                    "additionalProperties": { "type": "array", "items": { "type": "integer", "minimum": 0 } } },
                "post_totals": counts.clone(), "took_ms": { "type": "number" } } },
            "SiteStatus": { "type": "object", "required": ["site", "boards", "discovered", "saved", "extracted", "indexed", "failed", "failures", "last_round", "skipped_links", "top_skipped", "states_kept", "states_dropped", "keywords"],
                "additionalProperties": false,
                "properties": {
                    "site": { "type": "string" }, "boards": { "type": "integer" }, "discovered": { "type": "integer" }, "saved": { "type": "integer" },
                    "extracted": { "type": "integer" }, "indexed": { "type": "integer" }, "failed": { "type": "integer" },
                    "failures": { "type": "array", "items": { "type": "object", "additionalProperties": false, "required": ["stage", "cause", "threads", "examples"], "properties": {
                        "stage": { "type": "string" }, "cause": { "type": "string" }, "threads": { "type": "integer" }, "examples": { "type": "array", "items": { "type": "string" } } } } },
                    "last_round": { "type": ["object", "null"] },
                    "skipped_links": { "type": "integer" },
                    "top_skipped": { "type": "array", "items": { "type": "array" } },
                    "states_kept": { "type": "integer", "minimum": 0, "description": "browser mode (S4): DOM states kept, over the threads saved" },
                    "states_dropped": { "type": "integer", "minimum": 0, "description": "browser mode (S4): DOM states dropped as duplicates" },
                    "media": media_counts,
                    "keywords": { "type": "array", "items": { "type": "object" } } } }
        }}
    });
    // The facets' schemas apart: one json! of the whole document would pass
    // the macro recursion limit.
    if let Some(schemas) = doc["components"]["schemas"].as_object_mut() {
        if let Value::Object(more) = facet_schemas() {
            schemas.extend(more);
        }
        schemas.extend(thread_schemas());
    }
    doc
}

/// `Thread` and what it refers to, from `docs/thread.schema.json` (the one
/// description of a thread's JSON, which `luntan-export --ndjson` writes
/// too): its `$defs` become components named as they are, capitalized
/// (`post` is `Post`), and the references to them follow.
fn thread_schemas() -> serde_json::Map<String, Value> {
    fn component(def: &str) -> String {
        let mut c = def.chars();
        c.next().map(|first| first.to_uppercase().chain(c).collect()).unwrap_or_default()
    }
    fn follow(v: &mut Value) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(r)) = o.get_mut("$ref") {
                    if let Some(def) = r.strip_prefix("#/$defs/") {
                        *r = format!("#/components/schemas/{}", component(def));
                    }
                }
                o.values_mut().for_each(follow);
            }
            Value::Array(a) => a.iter_mut().for_each(follow),
            _ => {}
        }
    }
    let mut thread: Value = serde_json::from_str(luntan_core::doc::THREAD_SCHEMA).expect("docs/thread.schema.json is JSON");
    follow(&mut thread);
    let mut out = serde_json::Map::new();
    if let Value::Object(t) = &mut thread {
        // A schema's own `$id` would make its references relative to it, not to this document.
        t.remove("$schema");
        t.remove("$id");
        if let Some(Value::Object(defs)) = t.remove("$defs") {
            out.extend(defs.into_iter().map(|(k, v)| (component(&k), v)));
        }
    }
    out.insert("Thread".into(), thread);
    out
}

/// `Facets` (in `/api/search?facets=1`) and its parts.
fn facet_schemas() -> Value {
    json!({
            "Facets": { "type": "object", "additionalProperties": false, "required": ["forum", "board", "author", "year", "month", "undated", "authors_counted"],
                "description": "every matching thread (not only the page returned) counted by each facet; with facets=1",
                "properties": {
                    "forum": { "$ref": "#/components/schemas/Facet" }, "board": { "$ref": "#/components/schemas/Facet" },
                    "author": { "$ref": "#/components/schemas/Facet" }, "year": { "$ref": "#/components/schemas/Facet" },
                    "month": { "$ref": "#/components/schemas/Facet" },
                    "undated": { "type": "integer", "minimum": 0, "description": "matching threads without a first-post time (in no year or month)" },
                    "authors_counted": { "type": "integer", "minimum": 0, "description": "the matching threads the author counts are of: all of them, unless there were more than 2,000, then an even sample of them (reading a thread's authors reads the whole stored thread)" } } },
            "Facet": { "type": "object", "additionalProperties": false, "required": ["values", "more"], "properties": {
                "values": { "type": "array", "description": "most threads first, at most 20", "items": { "$ref": "#/components/schemas/FacetValue" } },
                "more": { "type": "integer", "minimum": 0, "description": "values left off" } } },
            "FacetValue": { "type": "object", "additionalProperties": false, "required": ["value", "count"], "properties": {
                "value": { "type": "string", "description": "site id, board id (as the index stores it), author name as written, YYYY or YYYY-MM" },
                "name": { "type": "string", "description": "a forum's or board's display name, where known" },
                "site": { "type": "string", "description": "a board's forum" },
                "count": { "type": "integer", "minimum": 1 } } }
    })
}
