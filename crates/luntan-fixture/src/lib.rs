//! luntan-fixture (to be written).
