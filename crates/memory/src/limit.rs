//! The memory limit: cgroups, configuration, physical RAM.

use std::fmt;

use crate::{Root, key_value, parse_kb};

/// A memory limit in bytes, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// The limit, in bytes.
    pub bytes: u64,
    /// Where it came from.
    pub source: LimitSource,
}

/// Where a [`Limit`] came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitSource {
    /// A cgroup's limit. `path` is the kernel file it was read from, as on
    /// the real system (`/sys/fs/cgroup/system.slice/memory.max`, or
    /// `/sys/fs/cgroup/memory/docker/…/memory.limit_in_bytes` for v1),
    /// whatever [`Root`] it was read under.
    Cgroup {
        /// The kernel file the limit was read from.
        path: String,
    },
    /// The limit given in the configuration.
    Configured,
    /// `MemTotal` of `/proc/meminfo`.
    PhysicalRam,
}

impl fmt::Display for LimitSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitSource::Cgroup { path } => write!(f, "cgroup ({path})"),
            LimitSource::Configured => f.write_str("configured"),
            LimitSource::PhysicalRam => f.write_str("physical RAM"),
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes, from {}", self.bytes, self.source)
    }
}

/// cgroup v1 reports "no limit" as a page-rounded `i64::MAX`
/// (9223372036854771712); anything at or above 2^62 is taken as no limit.
const V1_UNLIMITED: u64 = 1 << 62;

/// The smallest memory limit that applies to this process, or `None` if none
/// is known (not Linux and nothing configured).
///
/// Candidates, smallest wins (on a tie, the first listed):
///
/// - cgroup v2: the process's cgroup is the `0::/a/b` line of
///   `{root}/proc/self/cgroup`; `{root}/sys/fs/cgroup/a/b/memory.max`, then
///   `…/a/memory.max`, then `…/memory.max` are read (`max` means no limit,
///   a missing or malformed file is skipped). A limit anywhere on the way to
///   the root constrains the process; under systemd the root has none.
/// - cgroup v1: the `N:memory:/a/b` (or `N:cpu,memory:/a/b`) line;
///   `{root}/sys/fs/cgroup/memory/a/b/memory.limit_in_bytes` and its
///   ancestors likewise (values ≥ 2^62 mean no limit). Hybrid systems can
///   have both lines; both are read.
/// - `configured`, if given.
/// - physical RAM: `MemTotal` of `{root}/proc/meminfo`.
///
/// The conventional mount points are assumed (`/sys/fs/cgroup` for v2,
/// `/sys/fs/cgroup/memory` for v1); `/proc/self/mountinfo` is not read. A
/// cgroup path with `..` (a process outside its cgroup namespace's root)
/// is ignored, since the mounted tree does not contain its cgroup.
pub fn effective_limit(root: &Root, configured: Option<u64>) -> Option<Limit> {
    let mut candidates = cgroup_limits(root);
    if let Some(bytes) = configured {
        candidates.push(Limit {
            bytes,
            source: LimitSource::Configured,
        });
    }
    if let Some(bytes) = physical_ram(root) {
        candidates.push(Limit {
            bytes,
            source: LimitSource::PhysicalRam,
        });
    }
    // `min_by_key` keeps the last of equal minima; fold keeps the first.
    candidates.into_iter().fold(None, |best, limit| match best {
        Some(best) if best.bytes <= limit.bytes => Some(best),
        _ => Some(limit),
    })
}

/// Every cgroup limit on the way from the process's cgroups to the roots.
fn cgroup_limits(root: &Root) -> Vec<Limit> {
    let Some(text) = root.read("proc/self/cgroup") else {
        return Vec::new();
    };
    let paths = parse_cgroup(&text);
    let mut limits = Vec::new();
    if let Some(path) = paths.v2 {
        walk(
            root,
            "sys/fs/cgroup",
            &path,
            "memory.max",
            &mut limits,
            |v| {
                if v == "max" { None } else { v.parse().ok() }
            },
        );
    }
    if let Some(path) = paths.v1_memory {
        walk(
            root,
            "sys/fs/cgroup/memory",
            &path,
            "memory.limit_in_bytes",
            &mut limits,
            |v| v.parse().ok().filter(|&bytes| bytes < V1_UNLIMITED),
        );
    }
    limits
}

/// Reads `{root}/{mount}/{cgroup prefix}/{file}` for every prefix of the
/// cgroup path, deepest first, pushing each limit found.
fn walk(
    root: &Root,
    mount: &str,
    cgroup: &str,
    file: &str,
    limits: &mut Vec<Limit>,
    parse: impl Fn(&str) -> Option<u64>,
) {
    let Some(components) = components(cgroup) else {
        return;
    };
    for depth in (0..=components.len()).rev() {
        let mut relative = mount.to_owned();
        for component in &components[..depth] {
            relative.push('/');
            relative.push_str(component);
        }
        relative.push('/');
        relative.push_str(file);
        if let Some(bytes) = root.read(&relative).and_then(|v| parse(v.trim())) {
            limits.push(Limit {
                bytes,
                source: LimitSource::Cgroup {
                    path: format!("/{relative}"),
                },
            });
        }
    }
}

/// The components of a cgroup path (`/a/b` → `[a, b]`), or `None` if it
/// leaves the mounted tree (`..`).
fn components(cgroup: &str) -> Option<Vec<&str>> {
    let components: Vec<&str> = cgroup
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if components.contains(&"..") {
        return None;
    }
    Some(components)
}

/// The process's cgroup paths, from `/proc/self/cgroup`.
#[derive(Debug, Default, PartialEq, Eq)]
struct CgroupPaths {
    /// The unified (v2) hierarchy: the `0::/path` line.
    v2: Option<String>,
    /// The v1 hierarchy with the memory controller.
    v1_memory: Option<String>,
}

/// Parses `/proc/self/cgroup`: lines of `hierarchy-id:controllers:path`.
fn parse_cgroup(text: &str) -> CgroupPaths {
    let mut paths = CgroupPaths::default();
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if !path.starts_with('/') {
            continue;
        }
        if id == "0" && controllers.is_empty() {
            paths.v2.get_or_insert_with(|| path.to_owned());
        } else if controllers.split(',').any(|c| c == "memory") {
            paths.v1_memory.get_or_insert_with(|| path.to_owned());
        }
    }
    paths
}

/// `MemTotal` of `{root}/proc/meminfo`, in bytes.
fn physical_ram(root: &Root) -> Option<u64> {
    let text = root.read("proc/meminfo")?;
    text.lines()
        .filter_map(key_value)
        .find(|(key, _)| *key == "MemTotal")
        .and_then(|(_, value)| parse_kb(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_v2_line() {
        assert_eq!(
            parse_cgroup("0::/system.slice/txmap.service\n"),
            CgroupPaths {
                v2: Some("/system.slice/txmap.service".into()),
                v1_memory: None,
            }
        );
    }

    #[test]
    fn cgroup_v1_lines() {
        let text = "\
12:pids:/docker/4f3c
11:cpu,cpuacct:/docker/4f3c
10:memory:/docker/4f3c
9:blkio:/docker/4f3c
1:name=systemd:/docker/4f3c
0::/docker/4f3c
";
        assert_eq!(
            parse_cgroup(text),
            CgroupPaths {
                v2: Some("/docker/4f3c".into()),
                v1_memory: Some("/docker/4f3c".into()),
            }
        );
        assert_eq!(
            parse_cgroup("5:cpu,memory,pids:/a\n").v1_memory,
            Some("/a".into())
        );
        // `memory` must be a whole controller name.
        assert_eq!(parse_cgroup("5:memoryx:/a\n").v1_memory, None);
    }

    #[test]
    fn cgroup_garbage() {
        for text in ["", "garbage", "0::", "0::relative", ":::::", "\n\n", "0:"] {
            assert_eq!(parse_cgroup(text), CgroupPaths::default(), "{text:?}");
        }
        // A path containing colons stays whole.
        assert_eq!(parse_cgroup("0::/a:b").v2, Some("/a:b".into()));
    }

    #[test]
    fn cgroup_components() {
        assert_eq!(components("/"), Some(vec![]));
        assert_eq!(components("/a/b/"), Some(vec!["a", "b"]));
        assert_eq!(components("/../../user.slice"), None);
    }
}
