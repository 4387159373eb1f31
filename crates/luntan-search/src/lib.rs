//! luntan-search (to be written).
