//! Thread XML is read back by the index stage and by `--rebuild`, from files
//! anyone can edit: any text parses or errs without a panic, and whatever
//! parses writes back to XML that parses to the same thread.
#![no_main]

use libfuzzer_sys::fuzz_target;
use luntan_core::ThreadDoc;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(doc) = ThreadDoc::from_xml(text) else { return };
    let xml = doc.to_xml();
    let back = ThreadDoc::from_xml(&xml).unwrap_or_else(|e| panic!("written XML does not parse back: {e}\n{xml}"));
    // Writing cleans what XML cannot hold, so compare after one round.
    let again = ThreadDoc::from_xml(&back.to_xml()).expect("second round parses");
    assert_eq!(again, back, "a second round changed the thread");
});
