//! luntan's integration tests, in one binary so `make test` links once:
//! each module drives the real stage binaries against the fixture forum
//! on a loopback port (see `common`).

mod bad_input;
mod browser;
mod browser_socket;
mod browser_widget;
mod common;
mod crash;
mod export;
mod fixture_styles;
mod focus;
mod hostile;
mod hybrid;
mod incremental;
mod keywords;
mod learn;
mod links_unscripted;
mod local_faults;
mod media;
mod pipeline;
mod protocol;
mod recovery;
mod search_cli;
mod search_ranking;
mod search_recall;
mod serve;
mod serve_browser;
mod serve_hardening;
mod state_copy;
mod thread_xml;
mod workers;
