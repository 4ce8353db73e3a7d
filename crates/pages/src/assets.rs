//! The script and the style sheet every page links, compiled into the
//! binary (no CDN: the pages work without a network).

/// `/assets/txmap.js`: suggestions as one types, chosen with the
/// keyboard, a live region announcing result counts, and the status
/// page's refresh. Hand-written, a few KB, no build step.
pub const SCRIPT: &str = include_str!("../assets/txmap.js");

/// `/assets/txmap.css`.
pub const STYLE: &str = include_str!("../assets/txmap.css");
