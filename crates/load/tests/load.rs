//! Every mode yields the file's bytes; mapping modes really map; the
//! fallback, prewarm and error paths behave as documented.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use txmap_load::{EditionBytes, LoadError, LoadMode, Loader, load};

/// Writes `len` bytes of a non-repeating pattern to `dir/name`.
fn write_file(dir: &Path, name: &str, len: usize) -> PathBuf {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

/// Whether `path` appears in this process's memory maps (Linux only).
#[cfg(target_os = "linux")]
fn in_proc_maps(path: &Path) -> bool {
    let canonical = fs::canonicalize(path).unwrap();
    let maps = fs::read_to_string("/proc/self/maps").unwrap();
    let wanted = canonical.to_str().unwrap();
    maps.lines().any(|line| line.ends_with(wanted))
}

/// The start address of the mapping of `path` in /proc/self/maps.
#[cfg(target_os = "linux")]
fn proc_maps_start(path: &Path) -> Option<usize> {
    let canonical = fs::canonicalize(path).unwrap();
    let wanted = canonical.to_str().unwrap();
    fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .find(|line| line.ends_with(wanted))
        .map(|line| usize::from_str_radix(line.split('-').next().unwrap(), 16).unwrap())
}

#[test]
fn every_mode_gives_the_files_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for (i, len) in [1usize, 4095, 4096, 70_001, 3 << 20]
        .into_iter()
        .enumerate()
    {
        let path = write_file(dir.path(), &format!("edition-{i}.txmap"), len);
        let expected = fs::read(&path).unwrap();
        for mode in LoadMode::ALL {
            let loaded = load(&path, mode).unwrap();
            assert_eq!(loaded.bytes.as_ref(), &expected[..], "{mode}, {len} bytes");
            assert_eq!(loaded.size, len as u64);
            assert_eq!(loaded.asked, mode);
            assert_eq!(loaded.obtained, mode);
            assert_eq!(loaded.fallback, None);
            assert_eq!(loaded.path, path);
            assert_eq!(loaded.mapped, mode != LoadMode::Read);
            assert_eq!(loaded.bytes.is_mapped(), loaded.mapped);
            assert_eq!(loaded.prewarm.is_some(), mode.prewarms());
            let (start, n) = loaded.bytes.address_range();
            assert_eq!(start, loaded.bytes.as_ref().as_ptr() as usize);
            assert_eq!(n, len);
            if let Some(p) = &loaded.prewarm {
                p.wait();
            }
        }
    }
}

#[test]
fn mapping_modes_really_map() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [LoadMode::Mmap, LoadMode::Prewarm] {
        let path = write_file(dir.path(), &format!("{mode}.txmap"), 100_000);
        let loaded = load(&path, mode).unwrap();
        assert!(loaded.mapped);
        assert!(matches!(loaded.bytes, EditionBytes::Mapped(_)));
        #[cfg(target_os = "linux")]
        {
            assert!(in_proc_maps(&path), "{mode}: not in /proc/self/maps");
            assert_eq!(
                proc_maps_start(&path),
                Some(loaded.bytes.address_range().0),
                "{mode}: address_range does not start the mapping"
            );
        }
        if let Some(p) = &loaded.prewarm {
            p.wait();
        }
        drop(loaded);
        #[cfg(target_os = "linux")]
        assert!(!in_proc_maps(&path), "{mode}: still mapped after drop");
    }
}

#[test]
fn read_mode_does_not_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "read.txmap", 100_000);
    let loaded = load(&path, LoadMode::Read).unwrap();
    assert!(!loaded.mapped);
    assert!(matches!(loaded.bytes, EditionBytes::Read(_)));
    assert!(loaded.prewarm.is_none());
    #[cfg(target_os = "linux")]
    assert!(!in_proc_maps(&path), "read mode appears in /proc/self/maps");
}

#[test]
fn mapping_failure_falls_back_to_reading() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "fallback.txmap", 200_000);
    let expected = fs::read(&path).unwrap();
    let loader = Loader::new().simulate_map_failure("mmap is not available here");
    for mode in LoadMode::ALL {
        let loaded = loader.load(&path, mode).unwrap();
        assert_eq!(loaded.bytes.as_ref(), &expected[..], "{mode}");
        assert_eq!(loaded.asked, mode);
        assert_eq!(loaded.obtained, LoadMode::Read);
        assert!(!loaded.mapped);
        assert!(!loaded.bytes.is_mapped());
        assert!(loaded.prewarm.is_none());
        let fallback = (mode != LoadMode::Read).then(|| "mmap is not available here".to_owned());
        assert_eq!(loaded.fallback, fallback, "{mode}");
        #[cfg(target_os = "linux")]
        assert!(!in_proc_maps(&path), "{mode}: mapped despite failure");
    }
}

#[test]
fn prewarm_reads_the_whole_file_and_reports_progress() {
    let dir = tempfile::tempdir().unwrap();
    let len = 12 << 20;
    let path = write_file(dir.path(), "prewarm.txmap", len);
    /// (path, bytes read, total, calling thread's name)
    type Call = (PathBuf, u64, u64, Option<String>);
    let calls: Arc<Mutex<Vec<Call>>> = Arc::default();
    let seen = calls.clone();
    let loader = Loader::new()
        .prewarm_buffer(1 << 20)
        .on_prewarm_progress(Box::new(move |path, done, total| {
            let thread = std::thread::current().name().map(str::to_owned);
            seen.lock()
                .unwrap()
                .push((path.to_path_buf(), done, total, thread));
        }));
    let loaded = loader.load(&path, LoadMode::Prewarm).unwrap();
    assert_eq!(loaded.obtained, LoadMode::Prewarm);
    assert!(loaded.mapped);
    let prewarm = loaded.prewarm.as_ref().unwrap();
    assert_eq!(prewarm.total(), len as u64);
    prewarm.wait();
    assert!(prewarm.is_done());
    assert_eq!(prewarm.error(), None);
    assert_eq!(prewarm.bytes_read(), len as u64);
    assert_eq!(prewarm.bytes_read(), loaded.size);
    assert!(prewarm.elapsed().is_some());
    assert_eq!(loaded.bytes.as_ref(), &fs::read(&path).unwrap()[..]);

    let calls = calls.lock().unwrap();
    // About every 10% of 12 MiB read 1 MiB at a time, then the end.
    assert!(
        (9..=12).contains(&calls.len()),
        "{} progress calls",
        calls.len()
    );
    for (p, _, total, thread) in calls.iter() {
        assert_eq!(p, &path);
        assert_eq!(*total, len as u64);
        assert_eq!(thread.as_deref(), Some("txmap-prewarm-prewarm.txmap"));
    }
    assert!(calls.windows(2).all(|w| w[0].1 < w[1].1), "not increasing");
    assert_eq!(calls.last().unwrap().1, len as u64);
}

#[test]
fn prewarm_clones_observe_the_same_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "clone.txmap", 5 << 20);
    let loaded = load(&path, LoadMode::Prewarm).unwrap();
    let clone = loaded.prewarm.clone().unwrap();
    let waiter = std::thread::spawn(move || {
        clone.wait();
        clone.bytes_read()
    });
    assert_eq!(waiter.join().unwrap(), 5 << 20);
    assert!(loaded.prewarm.unwrap().is_done());
}

#[test]
fn empty_file_loads_as_empty_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "empty.txmap", 0);
    for mode in LoadMode::ALL {
        let loaded = load(&path, mode).unwrap();
        assert!(loaded.bytes.as_ref().is_empty());
        assert_eq!(loaded.size, 0);
        assert_eq!(loaded.obtained, LoadMode::Read);
        assert!(!loaded.mapped);
        assert!(loaded.prewarm.is_none());
        assert_eq!(loaded.fallback.is_some(), mode != LoadMode::Read, "{mode}");
    }
}

#[test]
fn missing_file_is_an_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-edition.txmap");
    for mode in LoadMode::ALL {
        let err = load(&path, mode).unwrap_err();
        assert!(matches!(err, LoadError::Open { .. }), "{err:?}");
        assert_eq!(err.path(), path);
        assert_eq!(
            err.io_error().map(|e| e.kind()),
            Some(std::io::ErrorKind::NotFound)
        );
        let msg = err.to_string();
        assert!(msg.contains(&*path.to_string_lossy()), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
}

#[test]
fn directory_is_not_a_file() {
    let dir = tempfile::tempdir().unwrap();
    for mode in LoadMode::ALL {
        let err = load(dir.path(), mode).unwrap_err();
        assert!(matches!(err, LoadError::NotAFile { .. }), "{err:?}");
        assert!(err.to_string().contains(&*dir.path().to_string_lossy()));
    }
}

#[test]
fn mode_names_round_trip() {
    for mode in LoadMode::ALL {
        assert_eq!(mode.to_string().parse::<LoadMode>(), Ok(mode));
    }
    assert_eq!("read".parse(), Ok(LoadMode::Read));
    assert_eq!("mmap".parse(), Ok(LoadMode::Mmap));
    assert_eq!(" Prewarm ".parse(), Ok(LoadMode::Prewarm));
    let err = "mapped".parse::<LoadMode>().unwrap_err();
    assert!(err.to_string().contains("mapped"), "{err}");
}

/// The `Rss:` of the mapping of `path` in /proc/self/smaps, in KiB.
#[cfg(target_os = "linux")]
fn mapping_rss_kib(path: &Path) -> u64 {
    let canonical = fs::canonicalize(path).unwrap();
    let wanted = canonical.to_str().unwrap();
    let smaps = fs::read_to_string("/proc/self/smaps").unwrap();
    let mut lines = smaps.lines().skip_while(|line| !line.ends_with(wanted));
    lines.next().expect("mapping not in /proc/self/smaps");
    let rss = lines.find(|line| line.starts_with("Rss:")).unwrap();
    rss.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Prewarm reads the file, not the mapping: the mapping gains no resident
/// pages until something touches it.
#[cfg(target_os = "linux")]
#[test]
fn prewarm_does_not_touch_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "untouched.txmap", 8 << 20);
    let loaded = load(&path, LoadMode::Prewarm).unwrap();
    let prewarm = loaded.prewarm.as_ref().unwrap();
    prewarm.wait();
    assert_eq!(prewarm.bytes_read(), 8 << 20);
    assert_eq!(mapping_rss_kib(&path), 0);
    // Touching one byte makes (at least) its page resident.
    assert_eq!(loaded.bytes[4 << 20], fs::read(&path).unwrap()[4 << 20]);
    assert!(mapping_rss_kib(&path) > 0);
}

/// `resident_bytes` counts a mapped file's pages in the page cache: after
/// evicting the file it is (nearly) empty, and a prewarm fills it.
#[cfg(target_os = "linux")]
#[test]
fn resident_bytes_follow_the_page_cache() {
    use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
    let dir = tempfile::tempdir().unwrap();
    let len = 16 << 20;
    let path = write_file(dir.path(), "cache.txmap", len);
    let file = fs::File::open(&path).unwrap();
    file.sync_all().unwrap();
    posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED).unwrap();
    let cold = load(&path, LoadMode::Mmap).unwrap();
    let before = cold.bytes.resident_bytes().unwrap();
    assert!(
        before < len as u64 / 2,
        "{before} of {len} resident after eviction"
    );
    let warm = load(&path, LoadMode::Prewarm).unwrap();
    warm.prewarm.as_ref().unwrap().wait();
    assert_eq!(cold.bytes.resident_bytes(), Some(len as u64));
    assert_eq!(warm.bytes.resident_bytes(), Some(len as u64));
    let read = load(&path, LoadMode::Read).unwrap();
    assert_eq!(read.bytes.resident_bytes(), Some(len as u64));
}

#[test]
fn held_prewarm_waits_for_release() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "held.txmap", 1 << 20);
    let loader = Loader::new().hold_prewarm();
    let loaded = loader.load(&path, LoadMode::Prewarm).unwrap();
    let prewarm = loaded.prewarm.as_ref().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(prewarm.bytes_read(), 0, "read before release");
    assert!(!prewarm.is_done());
    loader.release_prewarm();
    prewarm.wait();
    assert_eq!(prewarm.bytes_read(), 1 << 20);
    // Released once, later loads start at once.
    let again = loader.load(&path, LoadMode::Prewarm).unwrap();
    again.prewarm.as_ref().unwrap().wait();
}

/// Drops `path` from the page cache (its pages are clean: written and
/// synced by the test).
#[cfg(target_os = "linux")]
fn evict(path: &Path) {
    use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
    let file = fs::File::open(path).unwrap();
    file.sync_all().unwrap();
    posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED).unwrap();
}

/// The `VmFlags` of each of this process's mappings of `path`, in address
/// order: advice shows as `rr` (random) or `sr` (sequential), and advising
/// part of a mapping splits it.
#[cfg(target_os = "linux")]
fn vm_flags(path: &Path) -> Vec<String> {
    let canonical = fs::canonicalize(path).unwrap();
    let wanted = canonical.to_str().unwrap();
    let smaps = fs::read_to_string("/proc/self/smaps").unwrap();
    let mut out = Vec::new();
    let mut ours = false;
    for line in smaps.lines() {
        if let Some(flags) = line.strip_prefix("VmFlags:") {
            if ours {
                out.push(flags.trim().to_owned());
            }
        } else if line.contains('-') && line.split_whitespace().count() >= 5 {
            ours = line.ends_with(wanted);
        }
    }
    out
}

#[cfg(target_os = "linux")]
#[test]
fn advice_applies_to_the_range_asked() {
    use txmap_load::Advice;
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "advice.txmap", 64 << 12);
    let loaded = load(&path, LoadMode::Mmap).unwrap();
    let flags = vm_flags(&path);
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert!(
        flags[0].contains("rr"),
        "a new mapping is random: {flags:?}"
    );
    // Pages 8..16 sequential, the bounds widened to whole pages.
    loaded
        .bytes
        .advise((8 << 12) + 100..(16 << 12) - 100, Advice::Sequential)
        .unwrap();
    let flags = vm_flags(&path);
    assert_eq!(flags.len(), 3, "{flags:?}");
    assert!(flags[0].contains("rr") && !flags[0].contains("sr"));
    assert!(flags[1].contains("sr") && !flags[1].contains("rr"));
    assert!(flags[2].contains("rr"));
    // Normal takes both flags off; a range past the end is clipped.
    loaded.bytes.advise(0..usize::MAX, Advice::Normal).unwrap();
    assert!(
        vm_flags(&path)
            .iter()
            .all(|f| !f.contains("rr") && !f.contains("sr"))
    );
    // Read bytes take no advice.
    let read = load(&path, LoadMode::Read).unwrap();
    read.bytes.advise(0..10, Advice::Random).unwrap();
    assert!(read.bytes.residency().is_none());
}

/// `release` gives back what was not resident before and keeps the rest:
/// a pass over the file leaves the page cache as it found it.
#[cfg(target_os = "linux")]
#[test]
fn release_leaves_the_page_cache_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let len = 4 << 20;
    let path = write_file(dir.path(), "release.txmap", len);
    evict(&path);
    let loaded = load(&path, LoadMode::Mmap).unwrap();
    let bytes = &loaded.bytes;
    // A quarter resident before the pass.
    let quarter: u64 = bytes[..len / 4].iter().map(|&b| u64::from(b)).sum();
    let keep = bytes.residency().unwrap();
    let kept = keep.bytes_in(0..len);
    assert!(kept >= (len / 4) as u64, "{kept}");
    assert!(kept < (len / 2) as u64, "{kept}: random advice read ahead");
    let all: u64 = bytes.iter().map(|&b| u64::from(b)).sum();
    assert!(all >= quarter);
    assert_eq!(bytes.resident_bytes(), Some(len as u64));
    bytes.release(0..len, &keep).unwrap();
    let after = bytes.residency().unwrap();
    assert!(
        after.bytes_in(0..len / 4) == (len / 4) as u64,
        "the quarter stays"
    );
    assert!(
        after.bytes_in(len / 4..len) <= kept - (len / 4) as u64,
        "{} of the rest still resident",
        after.bytes_in(len / 4..len)
    );
    // The bytes are still the file's.
    assert_eq!(bytes[len - 1], fs::read(&path).unwrap()[len - 1]);
}

#[cfg(target_os = "linux")]
#[test]
fn prewarm_hot_reads_its_ranges_and_no_more() {
    let dir = tempfile::tempdir().unwrap();
    let len = 16 << 20;
    let path = write_file(dir.path(), "hot.txmap", len);
    evict(&path);
    let hot = [(1 << 20)..(2 << 20), (9 << 20)..(9 << 20) + 4096];
    let ranges = hot.to_vec();
    let loader = Loader::new().hot_ranges(std::sync::Arc::new(move |b: &[u8]| {
        assert_eq!(
            b.len(),
            16 << 20,
            "the ranges are asked of the file's bytes"
        );
        ranges.clone()
    }));
    let loaded = loader.load(&path, LoadMode::PrewarmHot).unwrap();
    assert_eq!(loaded.obtained, LoadMode::PrewarmHot);
    let prewarm = loaded.prewarm.as_ref().unwrap();
    prewarm.wait();
    assert_eq!(prewarm.error(), None);
    assert_eq!(prewarm.total(), (1 << 20) + 4096);
    assert_eq!(prewarm.bytes_read(), prewarm.total());
    let r = loaded.bytes.residency().unwrap();
    for h in &hot {
        assert_eq!(r.bytes_in(h.clone()), h.len() as u64, "{h:?} not read");
    }
    let total = r.bytes_in(0..len);
    assert!(
        total < 2 * prewarm.total() + (64 << 10),
        "{total} bytes resident for {} asked",
        prewarm.total()
    );
    // Without ranges, prewarm-hot reads the whole file.
    let whole = load(&path, LoadMode::PrewarmHot).unwrap();
    let p = whole.prewarm.as_ref().unwrap();
    p.wait();
    assert_eq!(p.total(), len as u64);
}

/// `will_need` reads a run of a cold mapping in without touching it.
#[cfg(target_os = "linux")]
#[test]
fn will_need_reads_the_run_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let len = 8 << 20;
    let path = write_file(dir.path(), "ahead.txmap", len);
    evict(&path);
    let loaded = load(&path, LoadMode::Mmap).unwrap();
    let run = (2 << 20) + 100..(3 << 20) - 100;
    assert!(loaded.bytes.residency().unwrap().bytes_in(run.clone()) < (1 << 20) / 2);
    txmap_load::will_need(&loaded.bytes[run.clone()]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let r = loaded.bytes.residency().unwrap();
        if r.bytes_in(run.clone()) >= (run.end - run.start) as u64 {
            // Asked for the run, not the file.
            assert!(r.bytes_in(0..len) < (len / 2) as u64);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the run was not read in"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // On read bytes it does nothing harmful.
    let read = load(&path, LoadMode::Read).unwrap();
    txmap_load::will_need(&read.bytes[..]);
}
