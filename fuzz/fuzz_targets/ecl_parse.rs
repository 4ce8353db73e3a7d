//! Any text given to the ECL parser must give an error or a tree that
//! prints as ECL which parses back to the same tree.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(expr) = txmap_ecl::parse(text) {
        let printed = txmap_ecl::print(&expr);
        match txmap_ecl::parse(&printed) {
            Ok(again) => assert_eq!(again, expr, "{text:?} printed as {printed:?}"),
            Err(e) => panic!("{text:?} printed as {printed:?}, which does not parse: {e}"),
        }
    }
});
