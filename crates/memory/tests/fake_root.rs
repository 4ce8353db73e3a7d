//! Reading kernel files from fake `/proc` and `/sys/fs/cgroup` trees.

use std::path::Path;

use tempfile::TempDir;
use txmap_memory::{
    Limit, LimitSource, ProcessMemory, Root, effective_limit, is_mapped, process_memory,
    process_status, resident_bytes,
};

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// A temporary directory standing for `/`.
struct Fake {
    dir: TempDir,
}

impl Fake {
    fn new() -> Fake {
        Fake {
            dir: TempDir::new().unwrap(),
        }
    }

    fn write(&self, path: &str, contents: impl AsRef<[u8]>) -> &Fake {
        let path = self.dir.path().join(path.trim_start_matches('/'));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    fn root(&self) -> Root {
        Root::at(self.dir.path())
    }
}

const STATUS: &str = "\
Name:\ttxmap
Umask:\t0022
State:\tS (sleeping)
Tgid:\t41872
Pid:\t41872
PPid:\t1
VmPeak:\t 3318972 kB
VmSize:\t 3252412 kB
VmLck:\t       0 kB
VmHWM:\t 1187340 kB
VmRSS:\t 1102844 kB
RssAnon:\t  201352 kB
RssFile:\t  899892 kB
RssShmem:\t    1600 kB
VmData:\t  398124 kB
VmSwap:\t       0 kB
Threads:\t17
voluntary_ctxt_switches:\t1845
";

const SMAPS_ROLLUP: &str = "\
55d1c3a00000-7ffd8e5f1000 ---p 00000000 00:00 0                          [rollup]
Rss:             1102844 kB
Pss:              652310 kB
Pss_Anon:         201352 kB
Pss_File:         450158 kB
Shared_Clean:     901488 kB
Private_Dirty:    199952 kB
Anonymous:        201352 kB
Swap:                  0 kB
";

const MEMINFO: &str = "\
MemTotal:       32795612 kB
MemFree:         1734212 kB
MemAvailable:   20143920 kB
Buffers:          512004 kB
Cached:         17263140 kB
SwapCached:            0 kB
";

/// `MemTotal` of [`MEMINFO`], in bytes.
const RAM: u64 = 32_795_612 * 1024;

#[test]
fn process_memory_from_files() {
    let fake = Fake::new();
    fake.write("proc/self/status", STATUS)
        .write("proc/self/smaps_rollup", SMAPS_ROLLUP);
    let memory = process_memory(&fake.root());
    assert_eq!(
        memory,
        ProcessMemory {
            vm_rss: Some(1_102_844 * 1024),
            rss_anon: Some(201_352 * 1024),
            rss_file: Some(899_892 * 1024),
            rss_shmem: Some(1600 * 1024),
            vm_hwm: Some(1_187_340 * 1024),
            rss: Some(1_102_844 * 1024),
            pss: Some(652_310 * 1024),
            anonymous: Some(201_352 * 1024),
            // Not the system root: getrusage would describe another process.
            major_faults: None,
            minor_faults: None,
        }
    );
    // The cheap reading: status only.
    let status = process_status(&fake.root());
    assert_eq!(status.vm_rss, memory.vm_rss);
    assert_eq!(status.rss_file, memory.rss_file);
    assert_eq!(status.pss, None);
}

#[test]
fn missing_files_give_none() {
    let fake = Fake::new();
    assert_eq!(process_memory(&fake.root()), ProcessMemory::default());
    assert_eq!(effective_limit(&fake.root(), None), None);
    assert_eq!(resident_bytes(&fake.root(), &[(0x1000, 10)]), vec![None]);
    assert!(!is_mapped(&fake.root(), Path::new("/srv/a.txe")));
    let nowhere = Root::at("/nonexistent/txmap-memory-test");
    assert_eq!(process_memory(&nowhere), ProcessMemory::default());
    assert_eq!(effective_limit(&nowhere, None), None);
}

#[test]
fn garbage_files_give_none() {
    for garbage in [
        &b"\xff\xfe\x00garbage\x80\x81"[..],
        b"",
        b"::::\n\n-\n0::\n",
        b"VmRSS: many kB\nRssFile: 12 MB\nMemTotal: -5 kB\nRss: kB\n",
        b"0::/a/b\n",
        b"max\n",
        b"7f00-7e00 r--s 0 0 0 /x\nRss: 5 MB\n",
    ] {
        let fake = Fake::new();
        for file in [
            "proc/self/status",
            "proc/self/smaps_rollup",
            "proc/self/smaps",
            "proc/self/maps",
            "proc/meminfo",
            "sys/fs/cgroup/memory.max",
            "sys/fs/cgroup/a/memory.max",
            "sys/fs/cgroup/a/b/memory.max",
        ] {
            fake.write(file, garbage);
        }
        if garbage != b"0::/a/b\n" {
            fake.write("proc/self/cgroup", garbage);
        } else {
            // A valid cgroup line over garbage limit files.
            fake.write("proc/self/cgroup", garbage)
                .write("sys/fs/cgroup/a/b/memory.max", "12 kB\n")
                .write("sys/fs/cgroup/a/memory.max", "\u{0}\u{1}");
        }
        let root = fake.root();
        assert_eq!(
            process_memory(&root),
            ProcessMemory::default(),
            "{garbage:?}"
        );
        assert_eq!(effective_limit(&root, None), None, "{garbage:?}");
        assert_eq!(
            resident_bytes(&root, &[(0x7f00, 0x100)]),
            vec![None],
            "{garbage:?}"
        );
        assert!(!is_mapped(&root, Path::new("/srv/a.txe")), "{garbage:?}");
    }
}

#[test]
fn cgroup_v2_walk_takes_the_smallest_level() {
    let fake = Fake::new();
    fake.write("proc/self/cgroup", "0::/system.slice/txmap.service\n")
        .write("proc/meminfo", MEMINFO)
        // Under systemd the root cgroup has no memory.max; write one saying
        // "max" anyway to check it is read as no limit.
        .write("sys/fs/cgroup/memory.max", "max\n")
        .write(
            "sys/fs/cgroup/system.slice/memory.max",
            format!("{}\n", 4 * GIB),
        )
        .write(
            "sys/fs/cgroup/system.slice/txmap.service/memory.max",
            format!("{}\n", 6 * GIB),
        );
    assert_eq!(
        effective_limit(&fake.root(), None),
        Some(Limit {
            bytes: 4 * GIB,
            source: LimitSource::Cgroup {
                path: "/sys/fs/cgroup/system.slice/memory.max".into()
            },
        })
    );
    // The leaf alone, when the middle says max.
    fake.write("sys/fs/cgroup/system.slice/memory.max", "max\n");
    assert_eq!(
        effective_limit(&fake.root(), None),
        Some(Limit {
            bytes: 6 * GIB,
            source: LimitSource::Cgroup {
                path: "/sys/fs/cgroup/system.slice/txmap.service/memory.max".into()
            },
        })
    );
    // No limit anywhere: physical RAM.
    fake.write(
        "sys/fs/cgroup/system.slice/txmap.service/memory.max",
        "max\n",
    );
    assert_eq!(
        effective_limit(&fake.root(), None),
        Some(Limit {
            bytes: RAM,
            source: LimitSource::PhysicalRam
        })
    );
}

#[test]
fn cgroup_limit_above_ram_loses_to_ram() {
    let fake = Fake::new();
    fake.write("proc/self/cgroup", "0::/big\n")
        .write("proc/meminfo", MEMINFO)
        .write("sys/fs/cgroup/big/memory.max", format!("{}\n", 64 * GIB));
    assert_eq!(
        effective_limit(&fake.root(), None).map(|l| l.source),
        Some(LimitSource::PhysicalRam)
    );
}

#[test]
fn cgroup_v1() {
    let fake = Fake::new();
    fake.write(
        "proc/self/cgroup",
        "\
12:pids:/docker/4f3c9a
11:cpuset:/docker/4f3c9a
10:cpu,cpuacct:/docker/4f3c9a
9:memory:/docker/4f3c9a
1:name=systemd:/docker/4f3c9a
0::/docker/4f3c9a
",
    )
    .write("proc/meminfo", MEMINFO)
    // v1 "no limit" at the root: a page-rounded i64::MAX.
    .write(
        "sys/fs/cgroup/memory/memory.limit_in_bytes",
        "9223372036854771712\n",
    )
    .write(
        "sys/fs/cgroup/memory/docker/memory.limit_in_bytes",
        "9223372036854771712\n",
    )
    .write(
        "sys/fs/cgroup/memory/docker/4f3c9a/memory.limit_in_bytes",
        format!("{}\n", 2 * GIB),
    );
    assert_eq!(
        effective_limit(&fake.root(), None),
        Some(Limit {
            bytes: 2 * GIB,
            source: LimitSource::Cgroup {
                path: "/sys/fs/cgroup/memory/docker/4f3c9a/memory.limit_in_bytes".into()
            },
        })
    );
    // A controller list naming memory among others.
    let fake = Fake::new();
    fake.write("proc/self/cgroup", "4:cpu,memory,pids:/job\n")
        .write(
            "sys/fs/cgroup/memory/job/memory.limit_in_bytes",
            format!("{}\n", 3 * GIB),
        );
    assert_eq!(
        effective_limit(&fake.root(), None).map(|l| l.bytes),
        Some(3 * GIB)
    );
}

#[test]
fn no_cgroup_file_gives_physical_ram() {
    let fake = Fake::new();
    fake.write("proc/meminfo", MEMINFO);
    assert_eq!(
        effective_limit(&fake.root(), None),
        Some(Limit {
            bytes: RAM,
            source: LimitSource::PhysicalRam
        })
    );
}

#[test]
fn configured_limit() {
    let fake = Fake::new();
    fake.write("proc/self/cgroup", "0::/app\n")
        .write("proc/meminfo", MEMINFO)
        .write("sys/fs/cgroup/app/memory.max", format!("{}\n", 4 * GIB));
    // Smaller than the cgroup's: it wins.
    assert_eq!(
        effective_limit(&fake.root(), Some(512 * MIB)),
        Some(Limit {
            bytes: 512 * MIB,
            source: LimitSource::Configured
        })
    );
    // Larger: the cgroup's wins.
    assert_eq!(
        effective_limit(&fake.root(), Some(8 * GIB)).map(|l| l.bytes),
        Some(4 * GIB)
    );
    // Nothing else known: the configured limit.
    let empty = Fake::new();
    assert_eq!(
        effective_limit(&empty.root(), Some(GIB)),
        Some(Limit {
            bytes: GIB,
            source: LimitSource::Configured
        })
    );
}

#[test]
fn cgroup_outside_the_namespace_is_ignored() {
    let fake = Fake::new();
    fake.write("proc/self/cgroup", "0::/../../user.slice\n")
        .write("proc/meminfo", MEMINFO)
        .write("sys/fs/cgroup/memory.max", "1024\n");
    assert_eq!(
        effective_limit(&fake.root(), None).map(|l| l.source),
        Some(LimitSource::PhysicalRam)
    );
}

/// `/proc/self/smaps` of a server with one edition mapped (1 GiB at
/// 0x7f3a40000000, 512 MiB resident), a second edition split into two
/// mappings (after an madvise), the heap and a thread stack.
const SMAPS: &str = "\
55d1c3a00000-55d1c3c00000 r-xp 00000000 fd:01 1835033                    /usr/local/bin/txmap
Size:               2048 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
Rss:                1876 kB
Pss:                1876 kB
Shared_Clean:          0 kB
Private_Clean:      1876 kB
Anonymous:             0 kB
Swap:                  0 kB
Locked:                0 kB
THPeligible:           0
VmFlags: rd ex mr mw me sd
55d1c5e2e000-55d1c8e2e000 rw-p 00000000 00:00 0                          [heap]
Size:              49152 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
Rss:               40000 kB
Pss:               40000 kB
Anonymous:         40000 kB
AnonHugePages:     16384 kB
Swap:                  0 kB
THPeligible:           1
VmFlags: rd wr mr mw me ac sd
7f3a40000000-7f3a80000000 r--s 00000000 fd:01 3938211                    /srv/txmap/editions/snomed-intl-20250101.txe
Size:            1048576 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
Rss:              524288 kB
Pss:              262144 kB
Pss_File:         262144 kB
Shared_Clean:     524288 kB
Shared_Dirty:          0 kB
Private_Clean:         0 kB
Private_Dirty:         0 kB
Referenced:       524288 kB
Anonymous:             0 kB
Swap:                  0 kB
Locked:                0 kB
THPeligible:           0
VmFlags: rd sh mr mw me ms sd
7f3a90000000-7f3a94000000 r--s 00000000 fd:01 3938377                    /srv/txmap/editions/snomed-uk-20250101.txe
Size:              65536 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
Rss:               10000 kB
Pss:               10000 kB
Anonymous:             0 kB
VmFlags: rd sh mr mw me ms sd
7f3a94000000-7f3a98000000 r--s 04000000 fd:01 3938377                    /srv/txmap/editions/snomed-uk-20250101.txe
Size:              65536 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
Rss:                2000 kB
Pss:                2000 kB
Anonymous:             0 kB
VmFlags: rd sh mr mw me ms sd rr
7f3a9c000000-7f3a9c800000 rw-p 00000000 00:00 0 
Size:               8192 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
Rss:                  64 kB
Pss:                  64 kB
Anonymous:            64 kB
VmFlags: rd wr mr mw me ac sd
7ffd8e5d0000-7ffd8e5f1000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
Rss:                  40 kB
Pss:                  40 kB
Anonymous:            40 kB
VmFlags: rd wr mr mw me gd ac
";

#[test]
fn resident_bytes_of_editions() {
    let fake = Fake::new();
    fake.write("proc/self/smaps", SMAPS);
    let intl = (0x7f3a_4000_0000_usize, GIB as usize);
    // A file of 128 MiB less 100 bytes: its mappings end on a page boundary.
    let uk = (0x7f3a_9000_0000_usize, 128 * MIB as usize - 100);
    let first_half_of_uk = (0x7f3a_9000_0000_usize, 64 * MIB as usize);
    let quarter_of_intl = (0x7f3a_4000_0000_usize, GIB as usize / 4);
    let unmapped = (0x1000_usize, 4096_usize);
    assert_eq!(
        resident_bytes(
            &fake.root(),
            &[
                intl,
                uk,
                first_half_of_uk,
                quarter_of_intl,
                unmapped,
                (0, 0)
            ]
        ),
        vec![
            Some(524_288 * 1024),
            Some(12_000 * 1024),
            Some(10_000 * 1024),
            // Proportional approximation for a partial overlap.
            Some(524_288 * 1024 / 4),
            Some(0),
            Some(0),
        ]
    );
    assert_eq!(resident_bytes(&fake.root(), &[]), Vec::<Option<u64>>::new());
}

#[test]
fn mapped_paths() {
    let fake = Fake::new();
    fake.write(
        "proc/self/maps",
        "\
55d1c3a00000-55d1c3c00000 r-xp 00000000 fd:01 1835033                    /usr/local/bin/txmap
55d1c5e2e000-55d1c8e2e000 rw-p 00000000 00:00 0                          [heap]
7f3a40000000-7f3a80000000 r--s 00000000 fd:01 3938211                    /srv/txmap/editions/snomed-intl-20250101.txe
7f3a90000000-7f3a94000000 r--s 00000000 fd:01 3938377                    /srv/txmap/my editions/uk 2025.txe
7f3aa0000000-7f3aa4000000 r--s 00000000 fd:01 3938400                    /srv/txmap/editions/old.txe (deleted)
7f3a9c000000-7f3a9c800000 rw-p 00000000 00:00 0 
7ffd8e5d0000-7ffd8e5f1000 rw-p 00000000 00:00 0                          [stack]
",
    );
    let root = fake.root();
    let mapped = |p: &str| is_mapped(&root, Path::new(p));
    assert!(mapped("/srv/txmap/editions/snomed-intl-20250101.txe"));
    assert!(mapped("/srv/txmap/my editions/uk 2025.txe"));
    assert!(mapped("/srv/txmap/editions/old.txe"));
    assert!(!mapped("/srv/txmap/editions/snomed-intl-20250101"));
    assert!(!mapped("/srv/txmap/editions/snomed-intl-20250101.txe.tmp"));
    assert!(!mapped("/srv/txmap/editions"));
    assert!(!mapped("[heap]x"));
    assert!(!mapped(""));
}

#[cfg(target_os = "linux")]
#[test]
fn smoke_real_process() {
    let memory = process_memory(&Root::system());
    assert!(memory.vm_rss.is_some_and(|rss| rss > 0), "{memory:?}");
    assert!(memory.minor_faults.is_some(), "{memory:?}");
}
