//! luntan-crawl (to be written).
