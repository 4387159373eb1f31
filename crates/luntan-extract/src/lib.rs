//! luntan-extract (to be written).
