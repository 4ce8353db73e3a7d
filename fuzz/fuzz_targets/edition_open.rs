//! Any bytes given to the edition reader must give an error or an edition
//! whose every accessor answers without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use txmap_store::Edition;

fuzz_target!(|data: &[u8]| {
    let Ok(e) = Edition::open(data) else {
        return;
    };
    let _ = e.verify(|_| {});
    let n = e.concept_count().min(64);
    for o in 0..n {
        let _ = e.concept_at(o);
        let _ = e.preferred_term(o);
        let _ = e.descriptions(o);
        let _ = e.parents(o).map(|p| p.to_vec());
        let _ = e.children(o).map(|p| p.to_vec());
        let _ = e.ancestors(o).map(|p| p.to_vec());
        let _ = e.descendants(o).map(|p| p.to_vec());
        let _ = e.subsumes(0, o);
        let _ = e.attributes(o);
        let _ = e.inbound(o);
        let _ = e.concrete_values(o);
        if let Ok(id) = e.sctid(o) {
            let _ = e.component_refsets(id);
            let _ = e.associations(id);
        }
    }
    let refsets: Vec<u64> = e.refsets().map(|r| r.id).collect();
    for r in refsets {
        let _ = e.members(r);
    }
    let _ = e.search("a", 10);
});
