//! The process's mappings: `/proc/self/smaps` and `/proc/self/maps`.

use std::path::Path;

use crate::{Root, key_value, parse_kb};

/// The page size assumed for a mapping whose `KernelPageSize` is not given.
const DEFAULT_PAGE: u64 = 4096;

/// Bytes of each given address range (`(start address, length)`) that are
/// resident, from `{root}/proc/self/smaps`: the sum of the `Rss:` of every
/// mapping overlapping the range.
///
/// A mapping of an edition file coincides with the edition's range, so its
/// `Rss` is counted whole. A mapping that the range covers only partly is
/// counted in proportion to the overlap, as if its resident pages were
/// spread evenly: an approximation (smaps gives no per-page detail, and this
/// crate uses neither `unsafe` nor `mincore`). The range is first widened to
/// the mapping's page boundaries (`KernelPageSize`), so a file whose length
/// is not a multiple of the page size still covers its mapping's last page.
///
/// One entry per range: `None` when smaps cannot be read or holds no
/// mapping, or when a mapping overlapping the range has no readable `Rss`;
/// `Some(0)` for a range that no mapping overlaps.
///
/// Cost: like `smaps_rollup`, reading `smaps` walks the page tables of every
/// mapping. For `/metrics`, not for every request.
pub fn resident_bytes(root: &Root, ranges: &[(usize, usize)]) -> Vec<Option<u64>> {
    let mappings = root
        .read("proc/self/smaps")
        .map(|text| parse_smaps(&text))
        .unwrap_or_default();
    if mappings.is_empty() {
        return vec![None; ranges.len()];
    }
    ranges
        .iter()
        .map(|&(start, len)| resident_in(&mappings, start as u64, len as u64))
        .collect()
}

/// One mapping of `/proc/self/smaps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mapping {
    start: u64,
    end: u64,
    rss: Option<u64>,
    page: u64,
}

/// Parses `/proc/self/smaps`: for each mapping a header line
/// (`start-end perms offset dev inode [path]`) and `Key: value` lines.
fn parse_smaps(text: &str) -> Vec<Mapping> {
    let mut mappings: Vec<Mapping> = Vec::new();
    for line in text.lines() {
        if let Some((start, end)) = parse_header(line) {
            mappings.push(Mapping {
                start,
                end,
                rss: None,
                page: DEFAULT_PAGE,
            });
            continue;
        }
        let (Some(mapping), Some((key, value))) = (mappings.last_mut(), key_value(line)) else {
            continue;
        };
        match key {
            "Rss" if mapping.rss.is_none() => mapping.rss = parse_kb(value),
            "KernelPageSize" => {
                if let Some(page) = parse_kb(value).filter(|p| p.is_power_of_two()) {
                    mapping.page = page;
                }
            }
            _ => {}
        }
    }
    mappings
}

/// The address range of a mapping's header line, or `None` if `line` is not
/// one.
fn parse_header(line: &str) -> Option<(u64, u64)> {
    let mut fields = line.split_whitespace();
    let range = fields.next()?;
    let perms = fields.next()?;
    if range.ends_with(':') || perms.len() != 4 {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    (start <= end).then_some((start, end))
}

/// Resident bytes of `[start, start + len)`, from the mappings.
fn resident_in(mappings: &[Mapping], start: u64, len: u64) -> Option<u64> {
    if len == 0 {
        return Some(0);
    }
    let end = start.saturating_add(len);
    let mut total: u64 = 0;
    for mapping in mappings {
        let size = mapping.end - mapping.start;
        // Widen the range to this mapping's page boundaries.
        let lo = start & !(mapping.page - 1);
        let hi = end
            .checked_next_multiple_of(mapping.page)
            .unwrap_or(u64::MAX);
        let overlap = hi.min(mapping.end).saturating_sub(lo.max(mapping.start));
        if overlap == 0 || size == 0 {
            continue;
        }
        let rss = mapping.rss?;
        let counted = if overlap == size {
            rss
        } else {
            // overlap < size, so this is below rss and fits in a u64.
            (u128::from(rss) * u128::from(overlap) / u128::from(size)) as u64
        };
        total = total.saturating_add(counted);
    }
    Some(total)
}

/// Whether `path` appears among the mappings in `{root}/proc/self/maps`.
///
/// The path is compared as given and, if it exists, canonicalized (the
/// kernel shows absolute paths with symbolic links resolved). A mapping of
/// a file that has since been deleted or replaced (`path (deleted)`) still
/// counts: its pages are still mapped and still file-backed. `false` if the
/// file cannot be read.
pub fn is_mapped(root: &Root, path: &Path) -> bool {
    let Ok(maps) = std::fs::read(root.join("proc/self/maps")) else {
        return false;
    };
    let literal = path.as_os_str().as_encoded_bytes().to_vec();
    let canonical = std::fs::canonicalize(path)
        .ok()
        .map(|p| p.into_os_string().into_encoded_bytes());
    let wanted: Vec<&[u8]> = std::iter::once(literal.as_slice())
        .chain(canonical.as_deref())
        .collect();
    maps.split(|&b| b == b'\n')
        .filter_map(path_field)
        .any(|mapped| {
            let mapped = mapped.strip_suffix(b" (deleted)").unwrap_or(mapped);
            wanted.contains(&mapped)
        })
}

/// The path of a `/proc/self/maps` line (what follows the five fields
/// `start-end perms offset dev inode`), if there is one.
fn path_field(line: &[u8]) -> Option<&[u8]> {
    let mut rest = line;
    for _ in 0..5 {
        rest = rest.trim_ascii_start();
        let field_end = rest.iter().position(u8::is_ascii_whitespace)?;
        rest = &rest[field_end..];
    }
    let path = rest.trim_ascii_start();
    (!path.is_empty()).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(
            parse_header(
                "7f3a40000000-7f3a80000000 r--s 00000000 fd:01 3938211                    /srv/txmap/editions/intl.txe"
            ),
            Some((0x7f3a_4000_0000, 0x7f3a_8000_0000))
        );
        assert_eq!(
            parse_header(
                "7ffd8e5d0000-7ffd8e5f1000 rw-p 00000000 00:00 0                          [stack]"
            ),
            Some((0x7ffd_8e5d_0000, 0x7ffd_8e5f_1000))
        );
        assert_eq!(
            parse_header("7f3a7c000000-7f3a7c021000 rw-p 00000000 00:00 0 "),
            Some((0x7f3a_7c00_0000, 0x7f3a_7c02_1000))
        );
        assert_eq!(parse_header("Rss:                 128 kB"), None);
        assert_eq!(parse_header("VmFlags: rd ex mr mw me dw sd"), None);
        assert_eq!(parse_header("ffff-0000 r--p 0 0 0"), None);
        assert_eq!(parse_header("xyz-0000 r--p 0 0 0"), None);
        assert_eq!(parse_header(""), None);
    }

    #[test]
    fn paths() {
        assert_eq!(
            path_field(
                b"55d1c3a00000-55d1c3c00000 r--p 00000000 fd:01 1835033   /usr/local/bin/txmap"
            ),
            Some(&b"/usr/local/bin/txmap"[..])
        );
        assert_eq!(
            path_field(
                b"7f3a40000000-7f3a80000000 r--s 00000000 fd:01 3938211 /srv/my editions/a b.txe"
            ),
            Some(&b"/srv/my editions/a b.txe"[..])
        );
        assert_eq!(
            path_field(b"7f3a7c000000-7f3a7c021000 rw-p 00000000 00:00 0 "),
            None
        );
        assert_eq!(
            path_field(b"7f3a7c000000-7f3a7c021000 rw-p 00000000 00:00 0"),
            None
        );
        assert_eq!(path_field(b""), None);
    }

    fn mapping(start: u64, end: u64, rss: u64) -> Mapping {
        Mapping {
            start,
            end,
            rss: Some(rss),
            page: 4096,
        }
    }

    #[test]
    fn overlap_arithmetic() {
        let mappings = [
            mapping(0x10000, 0x20000, 0x8000),
            mapping(0x20000, 0x30000, 0x10000),
        ];
        // Exactly one mapping.
        assert_eq!(resident_in(&mappings, 0x10000, 0x10000), Some(0x8000));
        // A file of 0x10000 - 100 bytes still covers its mapping's last page.
        assert_eq!(resident_in(&mappings, 0x10000, 0x10000 - 100), Some(0x8000));
        // Both.
        assert_eq!(resident_in(&mappings, 0x10000, 0x20000), Some(0x18000));
        // Half of the first: half its Rss.
        assert_eq!(resident_in(&mappings, 0x18000, 0x8000), Some(0x4000));
        // Nothing there.
        assert_eq!(resident_in(&mappings, 0x40000, 0x1000), Some(0));
        assert_eq!(resident_in(&mappings, 0x10000, 0), Some(0));
        // No overflow at the top of the address space.
        assert_eq!(resident_in(&mappings, u64::MAX - 10, 100), Some(0));
        // A mapping without Rss makes the answer unknown.
        let unknown = [Mapping {
            rss: None,
            ..mapping(0x10000, 0x20000, 0)
        }];
        assert_eq!(resident_in(&unknown, 0x10000, 0x10000), None);
        assert_eq!(resident_in(&unknown, 0x30000, 0x10000), Some(0));
    }
}
