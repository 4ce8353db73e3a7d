//! The importer's own memory, as the kernel counts it.

/// Peak resident set size (VmHWM) of this process in bytes, where the
/// platform reports it.
pub fn peak_rss() -> Option<u64> {
    status_kib("VmHWM:")
}

/// Current resident set size (VmRSS) in bytes.
pub fn current_rss() -> Option<u64> {
    status_kib("VmRSS:")
}

fn status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_kib(&status, key)
}

fn parse_kib(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_status_lines() {
        let s = "Name:\ttxmap\nVmHWM:\t  123456 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(super::parse_kib(s, "VmHWM:"), Some(123456 * 1024));
        assert_eq!(super::parse_kib(s, "VmRSS:"), Some(1000 * 1024));
        assert_eq!(super::parse_kib(s, "VmSwap:"), None);
    }
}
