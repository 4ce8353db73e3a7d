//! The process's memory figures: `/proc/self/status`, `/proc/self/smaps_rollup`
//! and `getrusage`.

use crate::{Root, key_value, parse_kb};

/// Memory figures of the running process, in bytes (faults are counts).
///
/// Every figure is `None` when it could not be read: not Linux, a kernel
/// without the field, a missing or malformed file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessMemory {
    /// `VmRSS` from `/proc/self/status`: resident set size.
    pub vm_rss: Option<u64>,
    /// `RssAnon` from `/proc/self/status`: resident anonymous memory.
    pub rss_anon: Option<u64>,
    /// `RssFile` from `/proc/self/status`: resident file-backed mappings
    /// (mapped editions, the binary, shared libraries).
    pub rss_file: Option<u64>,
    /// `RssShmem` from `/proc/self/status`: resident shared memory.
    pub rss_shmem: Option<u64>,
    /// `VmHWM` from `/proc/self/status`: peak resident set size.
    pub vm_hwm: Option<u64>,
    /// `Rss` from `/proc/self/smaps_rollup`.
    pub rss: Option<u64>,
    /// `Pss` from `/proc/self/smaps_rollup`: proportional set size, shared
    /// pages divided among the processes that map them.
    pub pss: Option<u64>,
    /// `Anonymous` from `/proc/self/smaps_rollup`.
    pub anonymous: Option<u64>,
    /// Major page faults (`ru_majflt` of `getrusage(RUSAGE_SELF)`): faults
    /// that read from disk, e.g. touching a cold page of a mapped edition.
    pub major_faults: Option<u64>,
    /// Minor page faults (`ru_minflt` of `getrusage(RUSAGE_SELF)`).
    pub minor_faults: Option<u64>,
}

/// The figures [`parse_status`] reads from `/proc/self/status`, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Status {
    /// `VmRSS`.
    pub vm_rss: Option<u64>,
    /// `RssAnon`.
    pub rss_anon: Option<u64>,
    /// `RssFile`.
    pub rss_file: Option<u64>,
    /// `RssShmem`.
    pub rss_shmem: Option<u64>,
    /// `VmHWM`.
    pub vm_hwm: Option<u64>,
}

/// The figures [`parse_smaps_rollup`] reads from `/proc/self/smaps_rollup`,
/// in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SmapsRollup {
    /// `Rss`.
    pub rss: Option<u64>,
    /// `Pss`.
    pub pss: Option<u64>,
    /// `Anonymous`.
    pub anonymous: Option<u64>,
}

/// Parses the text of `/proc/self/status`. Values are in `kB` and returned
/// in bytes; a missing or malformed field is `None`; the first occurrence of
/// a field wins.
pub fn parse_status(text: &str) -> Status {
    let mut status = Status::default();
    for line in text.lines() {
        let Some((key, value)) = key_value(line) else {
            continue;
        };
        let slot = match key {
            "VmRSS" => &mut status.vm_rss,
            "RssAnon" => &mut status.rss_anon,
            "RssFile" => &mut status.rss_file,
            "RssShmem" => &mut status.rss_shmem,
            "VmHWM" => &mut status.vm_hwm,
            _ => continue,
        };
        if slot.is_none() {
            *slot = parse_kb(value);
        }
    }
    status
}

/// Parses the text of `/proc/self/smaps_rollup` (a header line naming the
/// `[rollup]` range, then `Key: value kB` lines). Values are returned in
/// bytes; a missing or malformed field is `None`.
pub fn parse_smaps_rollup(text: &str) -> SmapsRollup {
    let mut rollup = SmapsRollup::default();
    for line in text.lines() {
        let Some((key, value)) = key_value(line) else {
            continue;
        };
        let slot = match key {
            "Rss" => &mut rollup.rss,
            "Pss" => &mut rollup.pss,
            "Anonymous" => &mut rollup.anonymous,
            _ => continue,
        };
        if slot.is_none() {
            *slot = parse_kb(value);
        }
    }
    rollup
}

/// Everything known about the process's memory: `{root}/proc/self/status`,
/// `{root}/proc/self/smaps_rollup`, and the page-fault counts of
/// `getrusage(RUSAGE_SELF)` (only when `root` is [`Root::system`]; `None`
/// otherwise).
///
/// Cost: reading `smaps_rollup` makes the kernel walk the page tables of
/// every mapping, which grows with resident memory (milliseconds with
/// gigabytes of mapped editions). For `/metrics`, not for every request; the
/// guard uses [`process_status`].
pub fn process_memory(root: &Root) -> ProcessMemory {
    let mut memory = process_status(root);
    if let Some(text) = root.read("proc/self/smaps_rollup") {
        let rollup = parse_smaps_rollup(&text);
        memory.rss = rollup.rss;
        memory.pss = rollup.pss;
        memory.anonymous = rollup.anonymous;
    }
    if root.is_system() {
        let (major, minor) = page_faults();
        memory.major_faults = major;
        memory.minor_faults = minor;
    }
    memory
}

/// The cheap part of [`process_memory`]: only `{root}/proc/self/status`
/// (a few microseconds: the kernel keeps these counters), leaving the
/// `smaps_rollup` and fault figures `None`. This is what the [`Guard`]
/// reads.
///
/// [`Guard`]: crate::Guard
pub fn process_status(root: &Root) -> ProcessMemory {
    let status = root
        .read("proc/self/status")
        .map(|text| parse_status(&text))
        .unwrap_or_default();
    ProcessMemory {
        vm_rss: status.vm_rss,
        rss_anon: status.rss_anon,
        rss_file: status.rss_file,
        rss_shmem: status.rss_shmem,
        vm_hwm: status.vm_hwm,
        ..ProcessMemory::default()
    }
}

/// `(major, minor)` page faults of this process so far.
#[cfg(unix)]
fn page_faults() -> (Option<u64>, Option<u64>) {
    use nix::sys::resource::{UsageWho, getrusage};
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(usage) => (
            u64::try_from(usage.major_page_faults()).ok(),
            u64::try_from(usage.minor_page_faults()).ok(),
        ),
        Err(_) => (None, None),
    }
}

#[cfg(not(unix))]
fn page_faults() -> (Option<u64>, Option<u64>) {
    (None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `/proc/self/status` of a server with a mapped edition (Linux 6.x).
    const STATUS: &str = "\
Name:\ttxmap
Umask:\t0022
State:\tS (sleeping)
Tgid:\t41872
Ngid:\t0
Pid:\t41872
PPid:\t1
TracerPid:\t0
Uid:\t998\t998\t998\t998
Gid:\t998\t998\t998\t998
FDSize:\t128
Groups:\t998
NStgid:\t41872
NSpid:\t41872
NSpgid:\t41872
NSsid:\t41872
Kthread:\t0
VmPeak:\t 3318972 kB
VmSize:\t 3252412 kB
VmLck:\t       0 kB
VmPin:\t       0 kB
VmHWM:\t 1187340 kB
VmRSS:\t 1102844 kB
RssAnon:\t  201352 kB
RssFile:\t  899892 kB
RssShmem:\t    1600 kB
VmData:\t  398124 kB
VmStk:\t     132 kB
VmExe:\t    9876 kB
VmLib:\t    4512 kB
VmPTE:\t    2496 kB
VmSwap:\t       0 kB
HugetlbPages:\t       0 kB
CoreDumping:\t0
THP_enabled:\t1
untag_mask:\t0xffffffffffffffff
Threads:\t17
SigQ:\t0/127473
SigPnd:\t0000000000000000
ShdPnd:\t0000000000000000
SigBlk:\t0000000000000000
SigIgn:\t0000000000001000
SigCgt:\t0000000100004440
CapInh:\t0000000000000000
CapPrm:\t0000000000000000
CapEff:\t0000000000000000
CapBnd:\t000001ffffffffff
CapAmb:\t0000000000000000
NoNewPrivs:\t0
Seccomp:\t0
Seccomp_filters:\t0
Speculation_Store_Bypass:\tthread vulnerable
SpeculationIndirectBranch:\tconditional enabled
Cpus_allowed:\tffff
Cpus_allowed_list:\t0-15
Mems_allowed:\t00000000,00000001
Mems_allowed_list:\t0
voluntary_ctxt_switches:\t1845
nonvoluntary_ctxt_switches:\t37
";

    /// `/proc/self/smaps_rollup` of the same process.
    const SMAPS_ROLLUP: &str = "\
55d1c3a00000-7ffd8e5f1000 ---p 00000000 00:00 0                          [rollup]
Rss:             1102844 kB
Pss:              652310 kB
Pss_Dirty:        199800 kB
Pss_Anon:         201352 kB
Pss_File:         450158 kB
Pss_Shmem:           800 kB
Shared_Clean:     901488 kB
Shared_Dirty:          0 kB
Private_Clean:      1404 kB
Private_Dirty:    199952 kB
Referenced:      1100120 kB
Anonymous:        201352 kB
KSM:                   0 kB
LazyFree:              0 kB
AnonHugePages:     67584 kB
ShmemPmdMapped:        0 kB
FilePmdMapped:         0 kB
Shared_Hugetlb:        0 kB
Private_Hugetlb:       0 kB
Swap:                  0 kB
SwapPss:               0 kB
Locked:                0 kB
";

    #[test]
    fn status_fields() {
        let status = parse_status(STATUS);
        assert_eq!(
            status,
            Status {
                vm_rss: Some(1_102_844 * 1024),
                rss_anon: Some(201_352 * 1024),
                rss_file: Some(899_892 * 1024),
                rss_shmem: Some(1600 * 1024),
                vm_hwm: Some(1_187_340 * 1024),
            }
        );
        // The kernel's identity: VmRSS = RssAnon + RssFile + RssShmem.
        assert_eq!(
            status.vm_rss,
            Some(status.rss_anon.unwrap() + status.rss_file.unwrap() + status.rss_shmem.unwrap())
        );
    }

    #[test]
    fn smaps_rollup_fields() {
        assert_eq!(
            parse_smaps_rollup(SMAPS_ROLLUP),
            SmapsRollup {
                rss: Some(1_102_844 * 1024),
                pss: Some(652_310 * 1024),
                anonymous: Some(201_352 * 1024),
            }
        );
    }

    #[test]
    fn kernel_thread_status_has_no_memory() {
        // Kernel threads (and old kernels, for RssAnon/RssFile) lack fields.
        let status = parse_status("Name:\tkthreadd\nState:\tS (sleeping)\nVmRSS:\t 12 kB\n");
        assert_eq!(status.vm_rss, Some(12 * 1024));
        assert_eq!(status.rss_file, None);
        assert_eq!(status.rss_anon, None);
        assert_eq!(status.vm_hwm, None);
    }

    #[test]
    fn garbage_is_none() {
        for text in [
            "",
            "\0\0\0",
            "VmRSS:",
            "VmRSS: lots kB\nRssFile: 12\nRssAnon: 1 MB\nVmHWM: -4 kB",
            "VmRSS 12 kB",
            ":::::\n:\n\n",
            "VmRSS: 99999999999999999999999 kB",
        ] {
            assert_eq!(parse_status(text), Status::default(), "{text:?}");
            assert_eq!(parse_smaps_rollup(text), SmapsRollup::default(), "{text:?}");
        }
    }

    #[test]
    fn first_occurrence_wins() {
        let status = parse_status("VmRSS:\t1 kB\nVmRSS:\t2 kB\n");
        assert_eq!(status.vm_rss, Some(1024));
    }
}
