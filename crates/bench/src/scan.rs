//! The scan crossover (issue 8): how fast one process scans a file front to
//! back for newlines, by five ways of getting at its bytes, cold and warm,
//! from RF2 file sizes up to half of RAM (and beyond, if asked).
//!
//! The arms ([`Arm`]):
//!
//! - `read`: `read(2)` into one fixed buffer (1 MiB by default, the size of
//!   `txmap_rf2::RowReader`'s buffer), as the importer reads a folder today;
//! - `mmap`: a read-only mapping with no advice;
//! - `mmap-seq`: the same, advised `MADV_SEQUENTIAL`;
//! - `mmap-willneed`: the same, advised `MADV_WILLNEED`;
//! - `mmap-populate`: mapped with `MAP_POPULATE`, so the kernel reads the
//!   file in and fills the page tables before `mmap` returns.
//!
//! Each scan counts newlines with `memchr` (as `RowReader` finds its rows)
//! and runs in a fresh child process ([`ChildArgs`], [`child_main`]), so
//! page-table state, peak RSS and fault counts are its own. The parent
//! ([`run`]) writes one test file of RF2-like rows (about 110 bytes a line)
//! as large as the largest size, and each size is a prefix of it: `len`
//! bytes from the start, read or mapped.
//!
//! - **Cold**: before the child starts, the parent drops the whole file
//!   from the page cache with `posix_fadvise(POSIX_FADV_DONTNEED)` (the file
//!   is fsynced after writing, so its pages are clean and can go) and
//!   records how much is still resident, by `mincore` over a mapping of
//!   the file ([`txmap_load::EditionBytes::resident_bytes`]). Dropping the
//!   whole page cache is neither needed nor done.
//! - **Warm**: the parent reads the prefix through once with `read(2)`
//!   before the child starts.
//!
//! The child reports the bytes scanned, the newlines counted (which must
//! be the same for every arm at a size; [`run`] fails if not), the seconds
//! from `open` to the mapping's `munmap`, the major and minor page faults
//! taken meanwhile (`getrusage(RUSAGE_SELF)`, after minus before), and its
//! peak RSS (`VmHWM`). GB/s are decimal: 10⁹ bytes per second.
//!
//! Mapping the file is the only `unsafe` in this crate (module `map`).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use crate::BenchError;

/// The default read buffer: `txmap_rf2::rows::DEFAULT_CAPACITY`.
pub const DEFAULT_BUFFER: usize = 1 << 20;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// One way of getting at the file's bytes. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arm {
    Read,
    Mmap,
    MmapSequential,
    MmapWillneed,
    MmapPopulate,
}

impl Arm {
    pub const ALL: [Arm; 5] = [
        Arm::Read,
        Arm::Mmap,
        Arm::MmapSequential,
        Arm::MmapWillneed,
        Arm::MmapPopulate,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Arm::Read => "read",
            Arm::Mmap => "mmap",
            Arm::MmapSequential => "mmap-seq",
            Arm::MmapWillneed => "mmap-willneed",
            Arm::MmapPopulate => "mmap-populate",
        }
    }

    pub fn from_name(s: &str) -> Option<Arm> {
        Arm::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// Whether the file's pages were dropped from the page cache or read
/// through before the child started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Temperature {
    Cold,
    Warm,
}

impl Temperature {
    pub fn name(self) -> &'static str {
        match self {
            Temperature::Cold => "cold",
            Temperature::Warm => "warm",
        }
    }
}

/// What a child measured: one scan by one arm.
#[derive(Clone, Debug, PartialEq)]
pub struct Scan {
    pub arm: Arm,
    pub bytes: u64,
    pub newlines: u64,
    /// From `open` to the end of the scan, the mapping unmapped.
    pub seconds: f64,
    /// Major page faults (the page had to be read from disk) during the
    /// scan.
    pub majflt: u64,
    /// Minor page faults (the page was in the page cache) during the scan.
    pub minflt: u64,
    /// The child's peak resident set (`VmHWM`), in bytes: mapped file
    /// pages the child touched count, page cache it read through does not.
    pub peak_rss: u64,
}

impl Scan {
    /// Decimal gigabytes per second.
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 / self.seconds.max(1e-9) / 1e9
    }

    pub fn to_json(&self) -> Value {
        json!({
            "arm": self.arm.name(),
            "bytes": self.bytes,
            "newlines": self.newlines,
            "seconds": self.seconds,
            "gbps": self.gbps(),
            "majflt": self.majflt,
            "minflt": self.minflt,
            "peak_rss": self.peak_rss,
        })
    }

    pub fn from_json(v: &Value) -> Result<Scan, BenchError> {
        let bad = || BenchError::new(format!("not a scan report: {v}"));
        let u = |k: &str| v[k].as_u64().ok_or_else(bad);
        Ok(Scan {
            arm: v["arm"].as_str().and_then(Arm::from_name).ok_or_else(bad)?,
            bytes: u("bytes")?,
            newlines: u("newlines")?,
            seconds: v["seconds"].as_f64().ok_or_else(bad)?,
            majflt: u("majflt")?,
            minflt: u("minflt")?,
            peak_rss: u("peak_rss")?,
        })
    }
}

/// What a child process is asked to do: scan the first `len` bytes of
/// `file` by `arm`. Passed as `key=value` arguments, so that no command
/// line parser needs to know them ([`ChildArgs::to_args`],
/// [`ChildArgs::parse`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildArgs {
    pub file: PathBuf,
    pub len: u64,
    pub arm: Arm,
    /// The `read` arm's buffer size in bytes.
    pub buffer: usize,
}

impl ChildArgs {
    pub fn to_args(&self) -> Vec<OsString> {
        let mut file = OsString::from("file=");
        file.push(&self.file);
        vec![
            file,
            format!("len={}", self.len).into(),
            format!("arm={}", self.arm.name()).into(),
            format!("buffer={}", self.buffer).into(),
        ]
    }

    pub fn parse(args: &[OsString]) -> Result<ChildArgs, BenchError> {
        let (mut file, mut len, mut arm, mut buffer) = (None, None, None, DEFAULT_BUFFER);
        for arg in args {
            let bad = || BenchError::new(format!("scan child: bad argument {arg:?}"));
            let bytes = arg.as_encoded_bytes();
            let eq = bytes.iter().position(|&b| b == b'=').ok_or_else(bad)?;
            let key = std::str::from_utf8(&bytes[..eq]).map_err(|_| bad())?;
            // The key is ASCII, so the lossy text has the value at the
            // same offset; `file=` keeps the original bytes instead.
            let value = &arg.to_string_lossy()[eq + 1..];
            match key {
                "file" => file = Some(split_value(arg, eq)),
                "len" => len = Some(value.parse().map_err(|_| bad())?),
                "arm" => arm = Some(Arm::from_name(value).ok_or_else(bad)?),
                "buffer" => buffer = value.parse().map_err(|_| bad())?,
                _ => return Err(bad()),
            }
        }
        let missing = |k: &str| BenchError::new(format!("scan child: no {k}= argument"));
        Ok(ChildArgs {
            file: file.ok_or_else(|| missing("file"))?,
            len: len.ok_or_else(|| missing("len"))?,
            arm: arm.ok_or_else(|| missing("arm"))?,
            buffer: buffer.max(1),
        })
    }
}

/// The part of `arg` after the `=` at byte `eq`, keeping non-UTF-8 paths
/// intact on Unix.
fn split_value(arg: &OsStr, eq: usize) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(OsStr::from_bytes(&arg.as_bytes()[eq + 1..]))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(&arg.to_string_lossy()[eq + 1..])
    }
}

/// The child process's whole job: parse `args`, scan, and return the
/// report as one line of JSON for stdout. `txmap bench scan-child` and the
/// `scan-child` helper binary (for this crate's tests) both call it.
pub fn child_main(args: &[OsString]) -> Result<String, BenchError> {
    let args = ChildArgs::parse(args)?;
    Ok(scan(&args)?.to_json().to_string())
}

/// Scans the first `args.len` bytes of `args.file` by `args.arm`, in this
/// process. Meant to run in a fresh child: fault counts and peak RSS are
/// the process's own.
pub fn scan(args: &ChildArgs) -> Result<Scan, BenchError> {
    let ctx = |e: io::Error| BenchError::new(format!("{}: {e}", args.file.display()));
    let len = usize::try_from(args.len)
        .map_err(|_| BenchError::new(format!("{} bytes do not fit in memory", args.len)))?;
    let before = usage()?;
    let start = Instant::now();
    let file = File::open(&args.file).map_err(ctx)?;
    let newlines = match args.arm {
        Arm::Read => read_scan(&file, len, args.buffer).map_err(ctx)?,
        _ if len == 0 => 0,
        arm => {
            let mapped = map::map(&file, len, arm == Arm::MmapPopulate).map_err(ctx)?;
            let advice = match arm {
                Arm::MmapSequential => Some(memmap2::Advice::Sequential),
                Arm::MmapWillneed => Some(memmap2::Advice::WillNeed),
                _ => None,
            };
            if let Some(advice) = advice {
                mapped.advise(advice).map_err(ctx)?;
            }
            let n = count_newlines(&mapped);
            drop(mapped);
            n
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let after = usage()?;
    Ok(Scan {
        arm: args.arm,
        bytes: args.len,
        newlines,
        seconds,
        majflt: after.0.saturating_sub(before.0),
        minflt: after.1.saturating_sub(before.1),
        peak_rss: peak_rss()?,
    })
}

fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// `read(2)` into one buffer of `buffer` bytes until `len` bytes are in.
fn read_scan(mut file: &File, len: usize, buffer: usize) -> io::Result<u64> {
    let mut buf = vec![0u8; buffer];
    let (mut left, mut newlines) = (len, 0);
    while left > 0 {
        let want = left.min(buf.len());
        let n = file.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("file ends {left} bytes short of {len}"),
            ));
        }
        newlines += count_newlines(&buf[..n]);
        left -= n;
    }
    Ok(newlines)
}

/// `(major, minor)` page faults of this process so far.
pub(crate) fn usage() -> Result<(u64, u64), BenchError> {
    use nix::sys::resource::{UsageWho, getrusage};
    let u =
        getrusage(UsageWho::RUSAGE_SELF).map_err(|e| BenchError::new(format!("getrusage: {e}")))?;
    let n = |v: std::ffi::c_long| u64::try_from(v).unwrap_or(0);
    Ok((n(u.major_page_faults()), n(u.minor_page_faults())))
}

/// This process's peak RSS (`VmHWM` in `/proc/self/status`), in bytes.
fn peak_rss() -> Result<u64, BenchError> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| BenchError::new(format!("/proc/self/status: {e}")))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .ok_or_else(|| BenchError::new("/proc/self/status: no VmHWM line"))
}

/// Mapping the test file: the only `unsafe` of this crate.
mod map {
    use std::fs::File;
    use std::io;

    use memmap2::{Mmap, MmapOptions};

    /// Maps the first `len` bytes (more than 0) of `file` read-only, with
    /// `MAP_POPULATE` if `populate`.
    pub(super) fn map(file: &File, len: usize, populate: bool) -> io::Result<Mmap> {
        let mut options = MmapOptions::new();
        options.len(len);
        if populate {
            options.populate();
        }
        // SAFETY: a mapping is sound while no one modifies or truncates the
        // mapped range of the file. The file is this benchmark's own, under
        // its output folder: the parent writes and fsyncs it before the
        // first child starts, only reads it while children run, and
        // deletes it after the last one. If someone else truncated it, the
        // child would die of SIGBUS and the parent would report a failed
        // child; it could not produce a wrong count.
        #[allow(unsafe_code)]
        unsafe {
            options.map(file)
        }
    }
}

/// The whole matrix: sizes × repeats × temperatures × arms.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Where the test file is written (created if missing).
    pub dir: PathBuf,
    /// Bytes to scan, each a prefix of one test file as large as the
    /// largest.
    pub sizes: Vec<u64>,
    pub arms: Vec<Arm>,
    pub temperatures: Vec<Temperature>,
    pub repeats: usize,
    /// The `read` arm's buffer in bytes.
    pub buffer: usize,
    /// Keep the test file (and reuse one of the right size next time).
    pub keep: bool,
    /// The child: a program and the arguments before [`ChildArgs`]'s, e.g.
    /// the current `txmap` and `["bench", "scan-child"]`.
    pub child_program: PathBuf,
    pub child_prefix: Vec<OsString>,
}

/// The sizes `txmap bench scan` runs by default: 256 MiB and 1 GiB (RF2
/// files are 10 MB to 1.3 GB), then 1/8, 1/4 and 1/2 of `mem_total`,
/// rounded to whole GiB.
pub fn default_sizes(mem_total: u64) -> Vec<u64> {
    let mut sizes = vec![256 * MIB, GIB];
    for div in [8, 4, 2] {
        let gib = ((mem_total / div) as f64 / GIB as f64).round().max(1.0) as u64;
        sizes.push(gib * GIB);
    }
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The machine, as the kernel describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    pub cpus: usize,
    /// `MemTotal` in bytes.
    pub mem_total: u64,
    /// `uname -r`.
    pub kernel: String,
}

impl Machine {
    pub fn current() -> Machine {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let mem_total = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024);
        Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            mem_total,
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_owned())
                .unwrap_or_default(),
        }
    }
}

/// One child's scan and the state the parent left the file in.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub size: u64,
    pub temperature: Temperature,
    pub repeat: usize,
    /// Bytes of the whole test file in the page cache just before the
    /// child started (`mincore`); `None` where that cannot be told.
    pub resident_before: Option<u64>,
    pub scan: Scan,
}

impl Run {
    /// The part of the scanned prefix that can have been resident before
    /// the child started: whole-file residency over the prefix, at most 1.
    /// Exact for a cold run (0 means none of it).
    pub fn resident_fraction(&self) -> Option<f64> {
        let r = self.resident_before?;
        Some((r as f64 / self.size.max(1) as f64).min(1.0))
    }
}

/// Everything [`run`] measured.
#[derive(Clone, Debug)]
pub struct ScanReport {
    pub machine: Machine,
    pub file: PathBuf,
    pub file_size: u64,
    pub buffer: usize,
    pub repeats: usize,
    pub runs: Vec<Run>,
}

/// The median and range of one cell of the table: a size, a temperature,
/// an arm.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub size: u64,
    pub temperature: Temperature,
    pub arm: Arm,
    pub gbps: (f64, f64, f64),
    pub majflt: u64,
    pub minflt: u64,
    pub peak_rss: u64,
    pub resident_fraction: Option<f64>,
}

fn median_f(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

impl ScanReport {
    /// Medians per size, temperature and arm, in the order they were run.
    pub fn cells(&self) -> Vec<Cell> {
        let mut keys: Vec<(u64, Temperature, Arm)> = Vec::new();
        for r in &self.runs {
            let k = (r.size, r.temperature, r.scan.arm);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        keys.sort_by_key(|&(size, t, arm)| {
            let a = Arm::ALL.iter().position(|&x| x == arm);
            (size, t == Temperature::Warm, a)
        });
        keys.into_iter()
            .map(|(size, temperature, arm)| {
                let runs: Vec<&Run> = self
                    .runs
                    .iter()
                    .filter(|r| (r.size, r.temperature, r.scan.arm) == (size, temperature, arm))
                    .collect();
                let f = |g: &dyn Fn(&Run) -> f64| median_f(runs.iter().map(|r| g(r)).collect());
                let gbps: Vec<f64> = runs.iter().map(|r| r.scan.gbps()).collect();
                let lo = gbps.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = gbps.iter().copied().fold(0.0, f64::max);
                let fractions: Vec<f64> =
                    runs.iter().filter_map(|r| r.resident_fraction()).collect();
                Cell {
                    size,
                    temperature,
                    arm,
                    gbps: (median_f(gbps), lo, hi),
                    majflt: f(&|r| r.scan.majflt as f64).round() as u64,
                    minflt: f(&|r| r.scan.minflt as f64).round() as u64,
                    peak_rss: f(&|r| r.scan.peak_rss as f64).round() as u64,
                    resident_fraction: (!fractions.is_empty()).then(|| median_f(fractions)),
                }
            })
            .collect()
    }

    pub fn to_json(&self) -> Value {
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|r| {
                let mut v = r.scan.to_json();
                v["size"] = json!(r.size);
                v["temperature"] = json!(r.temperature.name());
                v["repeat"] = json!(r.repeat);
                v["resident_before"] = json!(r.resident_before);
                v["resident_fraction"] = json!(r.resident_fraction());
                v
            })
            .collect();
        let cells: Vec<Value> = self
            .cells()
            .iter()
            .map(|c| {
                json!({
                    "size": c.size,
                    "temperature": c.temperature.name(),
                    "arm": c.arm.name(),
                    "gbps": c.gbps.0,
                    "gbps_min": c.gbps.1,
                    "gbps_max": c.gbps.2,
                    "majflt": c.majflt,
                    "minflt": c.minflt,
                    "peak_rss": c.peak_rss,
                    "resident_fraction": c.resident_fraction,
                })
            })
            .collect();
        json!({
            "machine": {
                "cpus": self.machine.cpus,
                "mem_total": self.machine.mem_total,
                "kernel": self.machine.kernel,
            },
            "file": self.file.display().to_string(),
            "file_size": self.file_size,
            "read_buffer": self.buffer,
            "repeats": self.repeats,
            "medians": cells,
            "runs": runs,
        })
    }

    /// One row per size and arm, cold then warm: median GB/s (range),
    /// median faults and peak RSS.
    pub fn markdown(&self) -> String {
        let cells = self.cells();
        let mut out = String::from(
            "| size | arm | cold GB/s | cold majflt | cold minflt | cold peak RSS \
             | warm GB/s | warm majflt | warm minflt | warm peak RSS |\n\
             |---|---|---|---|---|---|---|---|---|---|\n",
        );
        let mut rows: Vec<(u64, Arm)> = Vec::new();
        for c in &cells {
            if !rows.contains(&(c.size, c.arm)) {
                rows.push((c.size, c.arm));
            }
        }
        rows.sort_by_key(|&(size, arm)| (size, Arm::ALL.iter().position(|&a| a == arm)));
        for (size, arm) in rows {
            out.push_str(&format!("| {} | `{}` |", human(size), arm.name()));
            for t in [Temperature::Cold, Temperature::Warm] {
                match cells
                    .iter()
                    .find(|c| (c.size, c.arm, c.temperature) == (size, arm, t))
                {
                    Some(c) => out.push_str(&format!(
                        " {:.2} ({:.2}–{:.2}) | {} | {} | {} |",
                        c.gbps.0,
                        c.gbps.1,
                        c.gbps.2,
                        c.majflt,
                        c.minflt,
                        human(c.peak_rss)
                    )),
                    None => out.push_str(" – | – | – | – |"),
                }
            }
            out.push('\n');
        }
        out
    }
}

/// `3 GiB`, `256 MiB`, `1.5 GiB`, `12 KiB`.
pub fn human(bytes: u64) -> String {
    let (v, unit) = if bytes >= GIB {
        (bytes as f64 / GIB as f64, "GiB")
    } else if bytes >= MIB {
        (bytes as f64 / MIB as f64, "MiB")
    } else {
        (bytes as f64 / 1024.0, "KiB")
    };
    if (v - v.round()).abs() < 0.05 {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.1} {unit}")
    }
}

/// Runs the matrix: writes the test file (or reuses a kept one of the
/// right size), then for each size, repeat and temperature runs every arm
/// in a fresh child, rotating the arms' order from one repeat to the next.
/// `progress` sees each run as it completes. Fails if a child fails or if
/// two arms count different numbers of newlines in the same prefix.
pub fn run(
    options: &ScanOptions,
    mut progress: impl FnMut(&Run),
) -> Result<ScanReport, BenchError> {
    let mut sizes = options.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let Some(&file_size) = sizes.last() else {
        return Err(BenchError::new("no sizes to scan"));
    };
    if options.arms.is_empty() || options.temperatures.is_empty() || options.repeats == 0 {
        return Err(BenchError::new(
            "nothing to run: no arms, temperatures or repeats",
        ));
    }
    std::fs::create_dir_all(&options.dir)
        .map_err(|e| BenchError::new(format!("{}: {e}", options.dir.display())))?;
    let file = options.dir.join(format!("scan-{file_size}.txt"));
    let result = run_on(options, &sizes, &file, file_size, &mut progress);
    if !options.keep {
        let _ = std::fs::remove_file(&file);
    }
    result
}

fn run_on(
    options: &ScanOptions,
    sizes: &[u64],
    file: &Path,
    file_size: u64,
    progress: &mut impl FnMut(&Run),
) -> Result<ScanReport, BenchError> {
    let ctx = |e: io::Error| BenchError::new(format!("{}: {e}", file.display()));
    let reuse = std::fs::metadata(file).is_ok_and(|m| m.len() == file_size);
    if !reuse {
        check_space(&options.dir, file_size)?;
        write_test_file(file, file_size).map_err(ctx)?;
    }
    let mut runs = Vec::new();
    for &size in sizes {
        let mut newlines: Option<(Arm, u64)> = None;
        for repeat in 0..options.repeats {
            for &temperature in &options.temperatures {
                let mut arms = options.arms.clone();
                let n = arms.len();
                arms.rotate_left(repeat % n);
                for arm in arms {
                    let resident_before = match temperature {
                        Temperature::Cold => evict(file).map_err(ctx)?,
                        Temperature::Warm => {
                            read_through(file, size).map_err(ctx)?;
                            resident(file)
                        }
                    };
                    let args = ChildArgs {
                        file: file.to_owned(),
                        len: size,
                        arm,
                        buffer: options.buffer,
                    };
                    let scan = run_child(options, &args)?;
                    if scan.bytes != size {
                        return Err(BenchError::new(format!(
                            "{}: scanned {} bytes of {size}",
                            arm.name(),
                            scan.bytes
                        )));
                    }
                    match newlines {
                        None => newlines = Some((arm, scan.newlines)),
                        Some((first, n)) if n != scan.newlines => {
                            return Err(BenchError::new(format!(
                                "{} bytes: {} counted {n} newlines, {} counted {}",
                                size,
                                first.name(),
                                arm.name(),
                                scan.newlines
                            )));
                        }
                        Some(_) => {}
                    }
                    let run = Run {
                        size,
                        temperature,
                        repeat,
                        resident_before,
                        scan,
                    };
                    progress(&run);
                    runs.push(run);
                }
            }
        }
    }
    Ok(ScanReport {
        machine: Machine::current(),
        file: file.to_owned(),
        file_size,
        buffer: options.buffer,
        repeats: options.repeats,
        runs,
    })
}

fn run_child(options: &ScanOptions, args: &ChildArgs) -> Result<Scan, BenchError> {
    let output = Command::new(&options.child_program)
        .args(&options.child_prefix)
        .args(args.to_args())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| {
            BenchError::new(format!(
                "{}: cannot start: {e}",
                options.child_program.display()
            ))
        })?;
    if !output.status.success() {
        return Err(BenchError::new(format!(
            "scan child ({}, {} bytes) failed: {}",
            args.arm.name(),
            args.len,
            output.status
        )));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let v: Value = serde_json::from_str(line)
        .map_err(|e| BenchError::new(format!("scan child printed {line:?}: {e}")))?;
    Scan::from_json(&v)
}

/// Fails unless `dir`'s file system has room for a `size`-byte file and
/// 1 GiB to spare.
fn check_space(dir: &Path, size: u64) -> Result<(), BenchError> {
    let st = nix::sys::statvfs::statvfs(dir)
        .map_err(|e| BenchError::new(format!("{}: statvfs: {e}", dir.display())))?;
    #[allow(
        clippy::useless_conversion,
        reason = "the statvfs field types are narrower on 32-bit Linux"
    )]
    let free = u64::from(st.blocks_available()).saturating_mul(u64::from(st.fragment_size()));
    if size.saturating_add(GIB) > free {
        return Err(BenchError::new(format!(
            "{}: a {} test file needs {} free with 1 GiB to spare, there are {}; pass smaller --sizes",
            dir.display(),
            human(size),
            human(size),
            human(free)
        )));
    }
    Ok(())
}

/// Writes `size` bytes of RF2-description-like rows (about 110 bytes each,
/// CRLF, deterministic) and fsyncs them, so that their pages are clean and
/// `POSIX_FADV_DONTNEED` can drop them. The last row may be cut short.
pub fn write_test_file(path: &Path, size: u64) -> io::Result<()> {
    const WORDS: [&str; 16] = [
        "structure",
        "of",
        "left",
        "disorder",
        "fracture",
        "procedure",
        "acute",
        "chronic",
        "finding",
        "upper",
        "entire",
        "body",
        "lesion",
        "measurement",
        "skin",
        "nerve",
    ];
    // One 8 MiB block of varied rows, written over and over: generating
    // rows must not be what limits writing.
    let mut block = Vec::with_capacity(8 << 20);
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    while block.len() < (8 << 20) - 256 {
        let id = 100_000_000 + next() % 900_000_000;
        let concept = 100_000_000 + next() % 900_000_000;
        let mut term = String::new();
        for i in 0..(1 + next() % 4) {
            if i > 0 {
                term.push(' ');
            }
            term.push_str(WORDS[(next() % 16) as usize]);
        }
        writeln!(
            block,
            "{id}\t20250909\t1\t900000000000207008\t{concept}\ten\t900000000000013009\t{term}\t900000000000448009\r"
        )?;
    }
    let mut out = BufWriter::with_capacity(8 << 20, File::create(path)?);
    let mut left = size;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        out.write_all(&block[..n])?;
        left -= n as u64;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()
}

/// Drops the file's pages from the page cache and returns how many bytes
/// of it are still resident. Pages under I/O are not dropped (the last
/// child's readahead can still be in flight past its prefix), so this
/// tries again, a little later, up to ten times.
pub(crate) fn evict(path: &Path) -> io::Result<Option<u64>> {
    use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
    let file = File::open(path)?;
    let mut left = None;
    for _ in 0..10 {
        posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED)
            .map_err(io::Error::from)?;
        left = resident(path);
        if left.is_none_or(|n| n == 0) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(left)
}

/// Reads the first `len` bytes of the file once, so they are in the page
/// cache.
fn read_through(path: &Path, len: u64) -> io::Result<()> {
    let mut file = File::open(path)?.take(len);
    io::copy(&mut file, &mut io::sink())?;
    Ok(())
}

/// Bytes of the file in the page cache, by `mincore` over a mapping
/// advised random (which faults nothing in).
fn resident(path: &Path) -> Option<u64> {
    let loaded = txmap_load::load(path, txmap_load::LoadMode::Mmap).ok()?;
    if !loaded.mapped {
        return None;
    }
    loaded.bytes.resident_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_names_round_trip() {
        for arm in Arm::ALL {
            assert_eq!(Arm::from_name(arm.name()), Some(arm));
        }
        assert_eq!(Arm::from_name("mmap-sequential"), None);
    }

    #[test]
    fn child_args_round_trip() {
        let args = ChildArgs {
            file: PathBuf::from("/tmp/a=b/scan 1.txt"),
            len: 12345,
            arm: Arm::MmapWillneed,
            buffer: 4096,
        };
        assert_eq!(ChildArgs::parse(&args.to_args()).unwrap(), args);
        let e = ChildArgs::parse(&["len=1".into()]).unwrap_err();
        assert!(e.to_string().contains("no file="), "{e}");
        let e = ChildArgs::parse(&["colour=blue".into()]).unwrap_err();
        assert!(e.to_string().contains("bad argument"), "{e}");
    }

    #[test]
    fn default_sizes_follow_memory() {
        let g = |n: u64| n * GIB;
        assert_eq!(
            default_sizes(23_400 * MIB),
            [256 * MIB, g(1), g(3), g(6), g(11)]
        );
        assert_eq!(default_sizes(g(24)), [256 * MIB, g(1), g(3), g(6), g(12)]);
        assert_eq!(default_sizes(g(2)), [256 * MIB, g(1)]);
    }

    #[test]
    fn scan_counts_in_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        write_test_file(&path, 100_003).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 100_003);
        let want = bytes[..77_777].iter().filter(|&&b| b == b'\n').count() as u64;
        for arm in Arm::ALL {
            let args = ChildArgs {
                file: path.clone(),
                len: 77_777,
                arm,
                buffer: 1000,
            };
            let s = scan(&args).unwrap();
            assert_eq!((s.bytes, s.newlines), (77_777, want), "{}", arm.name());
            assert!(s.peak_rss > 0);
            assert_eq!(Scan::from_json(&s.to_json()).unwrap(), s);
        }
    }
}
