//! The memory guard's arithmetic.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use txmap_memory::{
    DEFAULT_SAMPLE_EVERY, Guard, GuardConfig, GuardDecision, Limit, LimitSource, Measured,
    ProcessMemory, Sampler, decide, measured,
};

const MIB: u64 = 1 << 20;

fn status(vm_rss: u64, rss_file: u64) -> ProcessMemory {
    ProcessMemory {
        vm_rss: Some(vm_rss),
        rss_anon: Some(vm_rss - rss_file),
        rss_file: Some(rss_file),
        rss_shmem: Some(0),
        ..ProcessMemory::default()
    }
}

fn limit(bytes: u64) -> Option<Limit> {
    Some(Limit {
        bytes,
        source: LimitSource::Configured,
    })
}

#[test]
fn file_backed_memory_excluded_only_when_mapped() {
    // 900 MiB resident of which 600 MiB are a mapped edition; limit 1000 MiB.
    let mem = status(900 * MIB, 600 * MIB);
    let config = GuardConfig::default();

    let whole = measured(&mem, false).unwrap();
    assert_eq!(
        whole,
        Measured {
            bytes: 900 * MIB,
            excludes_file_backed: false
        }
    );
    assert_eq!(
        decide(whole.bytes, 1000 * MIB, &config),
        GuardDecision::Refuse
    );

    let anonymous = measured(&mem, true).unwrap();
    assert_eq!(
        anonymous,
        Measured {
            bytes: 300 * MIB,
            excludes_file_backed: true
        }
    );
    assert_eq!(
        decide(anonymous.bytes, 1000 * MIB, &config),
        GuardDecision::Accept
    );

    // The same through a guard, and when editions come and go.
    let guard = Guard::with_reader(config, limit(1000 * MIB), false, move || Some(mem));
    assert_eq!(guard.check_new_request(), GuardDecision::Refuse);
    guard.set_any_mapped(true);
    assert!(guard.any_mapped());
    assert_eq!(guard.check_new_request(), GuardDecision::Accept);
    assert_eq!(guard.refused(), 1);
}

#[test]
fn measured_fallbacks() {
    // No RssFile (an old kernel): RssAnon + RssShmem.
    let mem = ProcessMemory {
        vm_rss: Some(100),
        rss_anon: Some(30),
        rss_shmem: Some(5),
        ..ProcessMemory::default()
    };
    assert_eq!(
        measured(&mem, true),
        Some(Measured {
            bytes: 35,
            excludes_file_backed: true
        })
    );
    // Only VmRSS: the whole of it, saying so.
    let mem = ProcessMemory {
        vm_rss: Some(100),
        ..ProcessMemory::default()
    };
    assert_eq!(
        measured(&mem, true),
        Some(Measured {
            bytes: 100,
            excludes_file_backed: false
        })
    );
    // Only smaps_rollup's Rss.
    let mem = ProcessMemory {
        rss: Some(70),
        ..ProcessMemory::default()
    };
    assert_eq!(measured(&mem, false).map(|m| m.bytes), Some(70));
    // Nothing.
    assert_eq!(measured(&ProcessMemory::default(), true), None);
    assert_eq!(measured(&ProcessMemory::default(), false), None);
    // Inconsistent figures do not underflow.
    let mem = ProcessMemory {
        vm_rss: Some(10),
        rss_file: Some(20),
        ..ProcessMemory::default()
    };
    assert_eq!(measured(&mem, true).map(|m| m.bytes), Some(0));
}

#[test]
fn threshold_boundaries() {
    let config = GuardConfig::default();
    assert_eq!(config.refuse_at, 0.85);
    assert_eq!(config.abort_at, 0.95);
    for (measured, expected) in [
        (0, GuardDecision::Accept),
        (849, GuardDecision::Accept),
        (850, GuardDecision::Refuse),
        (949, GuardDecision::Refuse),
        (950, GuardDecision::Abort),
        (1000, GuardDecision::Abort),
        (5000, GuardDecision::Abort),
    ] {
        assert_eq!(decide(measured, 1000, &config), expected, "{measured}");
    }

    let config = GuardConfig {
        refuse_at: 0.5,
        abort_at: 0.75,
    };
    let limit = 4 << 30;
    for (measured, expected) in [
        (limit / 2 - 1, GuardDecision::Accept),
        (limit / 2, GuardDecision::Refuse),
        (limit / 4 * 3 - 1, GuardDecision::Refuse),
        (limit / 4 * 3, GuardDecision::Abort),
    ] {
        assert_eq!(decide(measured, limit, &config), expected, "{measured}");
    }

    // refuse_at == abort_at: straight from Accept to Abort.
    let config = GuardConfig {
        refuse_at: 1.0,
        abort_at: 1.0,
    };
    assert_eq!(decide(999, 1000, &config), GuardDecision::Accept);
    assert_eq!(decide(1000, 1000, &config), GuardDecision::Abort);
    // A zero limit refuses everything.
    assert_eq!(decide(0, 0, &GuardConfig::default()), GuardDecision::Abort);
}

#[test]
fn config_validation() {
    assert!(GuardConfig::default().validate().is_ok());
    for (refuse_at, abort_at, ok) in [
        (0.85, 0.95, true),
        (0.5, 0.5, true),
        (0.1, 1.0, true),
        (1.0, 1.0, true),
        (0.0, 0.9, false),
        (-0.1, 0.9, false),
        (0.9, 0.8, false),
        (0.5, 1.01, false),
        (f64::NAN, 0.9, false),
        (0.5, f64::NAN, false),
        (0.5, f64::INFINITY, false),
    ] {
        let config = GuardConfig {
            refuse_at,
            abort_at,
        };
        assert_eq!(config.validate().is_ok(), ok, "{config:?}");
        if let Err(e) = config.validate() {
            assert!(e.to_string().contains("refuse_at"), "{e}");
        }
    }
}

/// A guard whose reader counts its calls and returns `vm_rss` as set.
fn counting_guard(limit_bytes: u64) -> (Guard, Arc<AtomicUsize>, Arc<AtomicU64>) {
    let reads = Arc::new(AtomicUsize::new(0));
    let rss = Arc::new(AtomicU64::new(0));
    let guard = {
        let (reads, rss) = (reads.clone(), rss.clone());
        Guard::with_reader(
            GuardConfig::default(),
            limit(limit_bytes),
            false,
            move || {
                reads.fetch_add(1, Ordering::SeqCst);
                Some(status(rss.load(Ordering::SeqCst), 0))
            },
        )
    };
    (guard, reads, rss)
}

#[test]
fn sampler_reads_once_per_n_checks() {
    let (guard, reads, _) = counting_guard(1000);
    let mut sampler = Sampler::new(4);
    for _ in 0..12 {
        guard.check_running(&mut sampler).unwrap();
    }
    assert_eq!(reads.load(Ordering::SeqCst), 3);
    for _ in 0..3 {
        guard.check_running(&mut sampler).unwrap();
    }
    assert_eq!(reads.load(Ordering::SeqCst), 3);
    guard.check_running(&mut sampler).unwrap();
    assert_eq!(reads.load(Ordering::SeqCst), 4);

    assert_eq!(Sampler::default().every(), DEFAULT_SAMPLE_EVERY);
    assert_eq!(DEFAULT_SAMPLE_EVERY, 4096);
    let mut sampler = Sampler::default();
    for _ in 0..4096 * 2 {
        guard.check_running(&mut sampler).unwrap();
    }
    assert_eq!(reads.load(Ordering::SeqCst), 6);

    // 0 is taken as 1: every check reads.
    let mut every = Sampler::new(0);
    assert_eq!(every.every(), 1);
    guard.check_running(&mut every).unwrap();
    assert_eq!(reads.load(Ordering::SeqCst), 7);
}

#[test]
fn running_operations_abort_at_abort_at() {
    let (guard, _, rss) = counting_guard(1000);
    let mut sampler = Sampler::new(1);
    // Above refuse_at: running operations go on; new requests are refused.
    rss.store(900, Ordering::SeqCst);
    assert!(guard.check_running(&mut sampler).is_ok());
    assert_eq!(guard.check_new_request(), GuardDecision::Refuse);
    // At abort_at: running operations stop; new requests are refused (never
    // Abort).
    rss.store(950, Ordering::SeqCst);
    let err = guard.check_running(&mut sampler).unwrap_err();
    assert_eq!(err.measured.bytes, 950);
    assert_eq!(err.limit, 1000);
    assert!(err.to_string().contains("950"), "{err}");
    assert_eq!(guard.check_new_request(), GuardDecision::Refuse);
    assert_eq!(guard.aborted(), 1);
    assert_eq!(guard.refused(), 2);
    // Back down.
    rss.store(100, Ordering::SeqCst);
    assert!(guard.check_running(&mut sampler).is_ok());
    assert_eq!(guard.check_new_request(), GuardDecision::Accept);
    assert_eq!((guard.refused(), guard.aborted()), (2, 1));
}

#[test]
fn no_limit_or_no_figures_accept() {
    let reads = Arc::new(AtomicUsize::new(0));
    let counted = reads.clone();
    let guard = Guard::with_reader(GuardConfig::default(), None, false, move || {
        counted.fetch_add(1, Ordering::SeqCst);
        Some(status(u64::MAX, 0))
    });
    let mut sampler = Sampler::new(1);
    assert_eq!(guard.check_new_request(), GuardDecision::Accept);
    assert!(guard.check_running(&mut sampler).is_ok());
    assert_eq!(reads.load(Ordering::SeqCst), 0);

    let blind = Guard::with_reader(GuardConfig::default(), limit(1), false, || None);
    assert_eq!(blind.check_new_request(), GuardDecision::Accept);
    assert!(blind.check_running(&mut sampler).is_ok());
    assert_eq!(blind.measure(), None);
    assert_eq!((blind.refused(), blind.aborted()), (0, 0));
    // Debug does not need the reader.
    assert!(format!("{blind:?}").contains("Guard"));
}

#[test]
fn guard_over_a_fake_root() {
    let dir = tempfile::TempDir::new().unwrap();
    std::fs::create_dir_all(dir.path().join("proc/self")).unwrap();
    std::fs::write(
        dir.path().join("proc/self/status"),
        "VmRSS:\t 921600 kB\nRssAnon:\t 102400 kB\nRssFile:\t 819200 kB\nRssShmem:\t 0 kB\n",
    )
    .unwrap();
    let root = txmap_memory::Root::at(dir.path());
    let guard = Guard::with_root(GuardConfig::default(), limit(1000 * MIB), false, root);
    assert_eq!(guard.check_new_request(), GuardDecision::Refuse);
    guard.set_any_mapped(true);
    assert_eq!(guard.check_new_request(), GuardDecision::Accept);
    assert_eq!(
        guard.measure(),
        Some(Measured {
            bytes: 100 * MIB,
            excludes_file_backed: true
        })
    );
}

#[test]
fn new_requests_share_a_recent_measurement() {
    let (guard, reads, rss) = counting_guard(1000);
    rss.store(100, Ordering::SeqCst);
    for _ in 0..50 {
        assert_eq!(guard.check_new_request(), GuardDecision::Accept);
    }
    // Fifty requests take far less than NEW_REQUEST_MAX_AGE, so they
    // share readings (one, unless the machine stalls the test).
    let shared = reads.load(Ordering::SeqCst);
    assert!((1..50).contains(&shared), "{shared} reads");
    // An old reading is not used.
    rss.store(900, Ordering::SeqCst);
    std::thread::sleep(txmap_memory::NEW_REQUEST_MAX_AGE * 2);
    assert_eq!(guard.check_new_request(), GuardDecision::Refuse);
    // A running operation's reading is the latest one too.
    rss.store(100, Ordering::SeqCst);
    guard.check_running(&mut Sampler::new(1)).unwrap();
    let before = reads.load(Ordering::SeqCst);
    assert_eq!(guard.check_new_request(), GuardDecision::Accept);
    assert!(reads.load(Ordering::SeqCst) <= before + 1);
}

#[test]
fn reservations_count_until_dropped() {
    // 300 MiB anonymous of a 1000 MiB limit; refuse at 850 MiB.
    let mem = ProcessMemory {
        vm_rss: Some(300 * MIB),
        rss_anon: Some(300 * MIB),
        rss_file: Some(0),
        ..ProcessMemory::default()
    };
    let guard = Guard::with_reader(
        GuardConfig::default(),
        limit(1000 * MIB),
        false,
        move || Some(mem),
    );
    let a = guard.reserve(300 * MIB).expect("300 + 300 < 850");
    assert_eq!(guard.reserved(), 300 * MIB);
    // 300 measured + 300 reserved + 300 more reaches the threshold.
    assert_eq!(guard.reserve(300 * MIB).unwrap_err(), GuardDecision::Refuse);
    assert_eq!(guard.refused(), 1);
    // A request that reserves nothing is judged on the measurement alone.
    let b = guard.reserve(200 * MIB).expect("800 < 850");
    assert_eq!(guard.reserved(), 500 * MIB);
    assert_eq!(guard.check_new_request(), GuardDecision::Accept);
    let c = guard.reserve(100 * MIB);
    assert!(c.is_err(), "900 ≥ 850");
    drop(a);
    assert_eq!(guard.reserved(), 200 * MIB);
    assert!(guard.reserve(300 * MIB).is_ok());
    drop(b);
    assert_eq!(guard.reserved(), 0);
    // Without a limit a reservation is only counted.
    let free = Guard::with_reader(GuardConfig::default(), None, false, move || Some(mem));
    let r = free.reserve(u64::MAX / 2).unwrap();
    assert_eq!(r.bytes(), u64::MAX / 2);
}
