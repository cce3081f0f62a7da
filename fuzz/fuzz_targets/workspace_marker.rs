//! Workspace markers: never panics; accepted member globs only select portable paths.
#![no_main]

use a2c::workspace::WorkspaceMarker;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(marker) = WorkspaceMarker::parse(text, std::path::Path::new("workspace.yaml")) {
        for g in marker.members.iter().flatten().chain(&marker.exclude) {
            assert!(a2c::util::paths::check_portable_relative(g).is_ok(), "{g}");
        }
        let _ = marker.selects("products/app");
    }
});
