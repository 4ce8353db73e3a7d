//! The subcommands.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use serde_json::json;
use txmap_import::{ImportOptions, ReleaseStatus};
use txmap_load::{EditionBytes, LoadMode};
use txmap_store::Edition;

use crate::progress::{Progress, human};
use crate::query::Found;

/// txmap: a FHIR terminology server for SNOMED CT, and its tools.
#[derive(Debug, Parser)]
#[command(name = "txmap", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compile RF2 release packages into one edition file, or a LOINC
    /// (`--loinc`), RxNorm (`--rxnorm`) or NDC (`--ndc`) release into one
    /// code system file.
    Import(ImportArgs),
    /// Check every checksum of an edition file.
    Verify { file: PathBuf },
    /// Ask a running server to rebuild its served set from its config
    /// file, through its admin listener (`[admin] listen`, read from the
    /// config) with the admin token from the environment
    /// (`TXMAP_ADMIN_TOKEN`, or the file `TXMAP_ADMIN_TOKEN_FILE` names)
    /// or the config's `[http] admin_token`.
    Reload {
        /// The running server's config file (its `[admin] listen`).
        #[arg(long, required_unless_present = "admin")]
        config: Option<PathBuf>,
        /// The admin listener's address, instead of the config's.
        #[arg(long, conflicts_with = "config")]
        admin: Option<String>,
        /// Wait until the new set serves (or the reload failed), and say
        /// which; without it the server answers at once and reloads in
        /// the background.
        #[arg(long)]
        wait: bool,
    },
    /// Take new releases from syndication feeds (docs/deploy.md): check
    /// their digests, compile them into a staging folder, rename them into
    /// the served folder, then ask the server to reload.
    Sync {
        /// The sync config (feeds, folders, credentials).
        #[arg(long)]
        config: PathBuf,
        /// Only this feed (its credentials still come from the config).
        #[arg(long)]
        feed: Option<String>,
        /// Run again every this many hours, for ever (a systemd timer or a
        /// CronJob is the other way).
        #[arg(long, value_name = "HOURS")]
        schedule: Option<f64>,
    },
    /// Make a new bearer token: prints the token (give it to its holder,
    /// once) and the `[[auth.tokens]]` entry for the config, which holds
    /// only its SHA-256.
    Token {
        /// Who holds it, for the config and the log.
        #[arg(long)]
        name: String,
        /// What it may do: `write`, `admin` (repeat or comma-separate).
        #[arg(long, value_delimiter = ',', default_value = "write")]
        scope: Vec<String>,
    },
    /// Show an edition file's identity, counts and sections.
    Inspect {
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show one concept: terms, parents, children, attributes, refsets.
    Lookup {
        file: PathBuf,
        sctid: u64,
        #[arg(long)]
        json: bool,
    },
    /// Evaluate an expression constraint: the concepts, one per line
    /// (code TAB preferred term), or their count. Exit 0 if any, 1 if none.
    Ecl(crate::query::EclArgs),
    /// Find concepts by the words of their terms: code TAB preferred term
    /// TAB the term that matched.
    Search(crate::query::SearchArgs),
    /// A concept's parents, children, ancestors or descendants.
    Hierarchy(crate::query::HierarchyArgs),
    /// A concept's historical associations, both ways: direction (`to`:
    /// this concept's targets, `from`: the concepts pointing at it) TAB
    /// refset TAB its name TAB code TAB preferred term.
    History(crate::query::HistoryArgs),
    /// What an expression gains (`+`) and loses (`-`) from one edition to
    /// another. Exit 0 if nothing changed, 1 if something did.
    Diff(crate::query::DiffArgs),
    /// Write a deterministic synthetic RF2 Snapshot release.
    Synth(SynthArgs),
    /// Serve editions over HTTP. With no config, serves a synthetic demo
    /// edition, generated on first run.
    Serve(ServeArgs),
    /// Run the HL7 terminology ecosystem test suite against a server, as
    /// the official runner does. Prints a line per test, summaries, and
    /// last `N passed, N failed`.
    Conformance(ConformanceArgs),
    /// Benchmark the FHIR operations (in process, or over HTTP against a
    /// running server) or ECL evaluation. Writes JSON and prints a
    /// Markdown table.
    #[command(subcommand)]
    Bench(crate::bench::BenchCommand),
}

#[derive(Debug, Args)]
struct ConformanceArgs {
    /// The server's root URL; the endpoints are {server}/r4 and {server}/r5.
    #[arg(long, value_name = "URL")]
    server: String,
    /// The suite's tests folder (holding test-cases.json), or the
    /// repository holding it.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "../shared/tx-ecosystem/tests"
    )]
    suite_dir: PathBuf,
    /// FHIR versions to run, each against its own endpoint: r4, r5.
    #[arg(long, value_delimiter = ',', default_value = "r4,r5")]
    fhir: Vec<String>,
    /// Modes to turn on (general is always on; `!general` turns it off):
    /// snomed, omop, tx.fhir.org, flat, ...
    #[arg(long, value_delimiter = ',', default_value = "general")]
    modes: Vec<String>,
    /// Only tests whose name contains this.
    #[arg(long, value_name = "SUBSTR")]
    filter: Option<String>,
    /// Only these suites (exact names).
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    suite: Vec<String>,
    /// Write the JSON report here.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Write expected and actual JSON of every failed test under this
    /// folder: DIR/<fhir>/{expected,actual}/<response file>.
    #[arg(long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Tests that must pass, one fhirVersion/suite/test per line (`#`
    /// comments): the exit status is non-zero if one of them fails.
    #[arg(long, value_name = "FILE")]
    ratchet: Option<PathBuf>,
    /// Rewrite the ratchet with exactly the tests that passed.
    #[arg(long, requires = "ratchet")]
    update_ratchet: bool,
    /// Turn off the official runner's lenient (Base64) string comparison.
    #[arg(long)]
    strict_strings: bool,
    /// An externals file of expected messages (messages-*.json).
    #[arg(long, value_name = "FILE")]
    externals: Option<PathBuf>,
    /// Do not use $cache-control even when the server offers it.
    #[arg(long)]
    no_cache_control: bool,
    /// Seconds to wait for each response.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// The config file (see docs/config.md).
    #[arg(long, env = "TXMAP_CONFIG")]
    config: Option<PathBuf>,
    /// Address to listen on, overriding the config.
    #[arg(long)]
    listen: Option<String>,
    /// Set SO_REUSEPORT so several processes can share the port.
    #[arg(long)]
    reuse_port: bool,
    /// Where the demo edition is kept.
    #[arg(long, env = "TXMAP_DATA_DIR")]
    data_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ImportArgs {
    /// An RF2 package: a .zip as distributed or an unpacked folder. Repeat
    /// for an extension: base first, extension after.
    #[arg(long = "rf2", value_name = "PATH", required_unless_present_any = ["loinc", "rxnorm", "ndc"])]
    rf2: Vec<PathBuf>,
    /// A LOINC release folder (`Loinc_2.82`, as unzipped), compiled into a
    /// code system file instead of an edition.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["rf2", "rxnorm", "ndc"])]
    loinc: Option<PathBuf>,
    /// The LOINC release's version, when its folder is not named
    /// `Loinc_<version>`.
    #[arg(long, value_name = "VERSION", requires = "loinc")]
    loinc_version: Option<String>,
    /// An RxNorm release folder (its `rrf` folder, or the folder holding
    /// it), compiled into a code system file.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["rf2", "ndc"])]
    rxnorm: Option<PathBuf>,
    /// The RxNorm release's version (`08042025`), when `RXNSAB.RRF` does
    /// not give it.
    #[arg(long, value_name = "VERSION", requires = "rxnorm")]
    rxnorm_version: Option<String>,
    /// An NDC directory release folder (`product.txt`, `package.txt`),
    /// compiled into a code system file.
    #[arg(long, value_name = "DIR", conflicts_with = "rf2")]
    ndc: Option<PathBuf>,
    /// The NDC release's date, when its folder is not named by it
    /// (`2025-07-11`).
    #[arg(long, value_name = "VERSION", requires = "ndc")]
    ndc_version: Option<String>,
    /// The edition file to write (replaced atomically if it exists).
    #[arg(long, short, value_name = "FILE")]
    out: PathBuf,
    /// Memory the importer plans for (e.g. 1GiB, 512MiB).
    #[arg(long, default_value = "1GiB", value_parser = parse_size)]
    max_memory: u64,
    /// Memory per sorter before it spills to disk; default max-memory / 4
    /// (/ 8 while two stages run at once).
    #[arg(long, value_parser = parse_size)]
    sort_buffer: Option<u64>,
    /// Where temporary spill files go; default the output's directory.
    #[arg(long)]
    temp_dir: Option<PathBuf>,
    /// 2 runs the import's two independent halves at once (the default on
    /// two or more cores); 1 runs them in turn, for a lower peak. Same file.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=2))]
    threads: Option<u8>,
    /// Skip malformed rows (counted and reported) instead of stopping.
    #[arg(long)]
    lenient: bool,
    /// Override the edition URI (default from the module dependency refset).
    #[arg(long)]
    edition_uri: Option<String>,
    /// Override the version URI.
    #[arg(long)]
    version_uri: Option<String>,
    /// Treat the release as published (`http://snomed.info/sct/...`).
    #[arg(long, conflicts_with = "unpublished")]
    published: bool,
    /// Treat the release as unpublished (`http://snomed.info/xsct/...`).
    #[arg(long)]
    unpublished: bool,
    /// The language refset whose preferred terms are the default display.
    #[arg(long)]
    default_language_refset: Option<u64>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Debug, Args)]
struct SynthArgs {
    /// Concept rows to generate (International scale: 535000); with
    /// `--loinc`, terms (LOINC scale: 105000).
    #[arg(long, default_value_t = 10_000)]
    concepts: usize,
    /// Write a LOINC release folder (the CSV files `import --loinc`
    /// reads) instead of RF2.
    #[arg(long, conflicts_with_all = ["extension_of_seed", "effective_time", "rxnorm"])]
    loinc: bool,
    /// Write an RxNorm release (the RRF files `import --rxnorm` reads)
    /// instead of RF2.
    #[arg(long, conflicts_with_all = ["extension_of_seed", "effective_time"])]
    rxnorm: bool,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A directory, or a path ending in .zip.
    #[arg(long)]
    out: PathBuf,
    /// Release date, YYYYMMDD.
    #[arg(long)]
    effective_time: Option<u32>,
    /// Make an extension of the base generated with this seed.
    #[arg(long, requires = "base_concepts")]
    extension_of_seed: Option<u64>,
    /// Concept count of that base.
    #[arg(long)]
    base_concepts: Option<usize>,
    /// The extension's seven-digit namespace.
    #[arg(long, default_value_t = 1_000_124)]
    namespace: u32,
    /// The base's release date, YYYYMMDD (its --effective-time).
    #[arg(long, default_value_t = txmap_synth::DEFAULT_EFFECTIVE_TIME)]
    base_effective_time: u32,
}

/// Sizes as in the config file: `1GiB`, `512MiB`, `800M` or plain bytes.
fn parse_size(s: &str) -> Result<u64, String> {
    txmap_server::config::parse_size(s)
}

/// Runs the command: `Found::No` is "nothing found" for the query
/// commands (exit 1); every other command finds what it does.
pub fn run(cli: Cli) -> Result<Found> {
    let done = match cli.command {
        Command::Import(a) => import(a),
        Command::Verify { file } => verify(file),
        Command::Reload {
            config,
            admin,
            wait,
        } => reload(config.as_deref(), admin, wait),
        Command::Sync {
            config,
            feed,
            schedule,
        } => sync(&config, feed.as_deref(), schedule),
        Command::Token { name, scope } => token(&name, &scope),
        Command::Inspect { file, json } => inspect(file, json),
        Command::Lookup { file, sctid, json } => lookup(file, sctid, json),
        Command::Ecl(a) => return crate::query::ecl(a),
        Command::Search(a) => return crate::query::search(a),
        Command::Hierarchy(a) => return crate::query::hierarchy(a),
        Command::History(a) => return crate::query::history(a),
        Command::Diff(a) => return crate::query::diff(a),
        Command::Synth(a) => synth(a),
        Command::Serve(a) => serve(a),
        Command::Conformance(a) => conformance(a),
        Command::Bench(c) => crate::bench::run(c),
    };
    done.map(|()| Found::Yes)
}

fn import(a: ImportArgs) -> Result<()> {
    if let Some(dir) = &a.loinc {
        return import_loinc(dir, &a);
    }
    if let Some(dir) = &a.rxnorm {
        return import_rxnorm(dir, &a);
    }
    if let Some(dir) = &a.ndc {
        return import_ndc(dir, &a);
    }
    let mut options = ImportOptions::new(a.rf2, a.out.clone());
    options.max_memory = a.max_memory;
    options.sort_buffer = a.sort_buffer;
    options.temp_dir = a.temp_dir;
    if let Some(threads) = a.threads {
        options.threads = usize::from(threads);
    }
    options.lenient = a.lenient;
    options.edition_uri = a.edition_uri;
    options.version_uri = a.version_uri;
    options.default_language_refset = a.default_language_refset;
    options.status = match (a.published, a.unpublished) {
        (true, _) => ReleaseStatus::Published,
        (_, true) => ReleaseStatus::Unpublished,
        _ => ReleaseStatus::Auto,
    };
    let progress = Progress::new(a.quiet || a.json);
    let report = txmap_import::import(&options, &progress)
        .with_context(|| format!("importing into {}", a.out.display()))?;
    if a.json {
        let stages: Vec<_> = report
            .stages
            .iter()
            .map(|s| json!({"name": s.name, "seconds": s.seconds, "rows": s.rows, "rss": s.rss}))
            .collect();
        let out = json!({
            "output": report.output,
            "edition_uri": report.identity.edition_uri,
            "version_uri": report.identity.version_uri,
            "file_size": report.file_size,
            "wall_seconds": report.wall_seconds,
            "peak_rss": report.peak_rss,
            "spilled_runs": report.spilled_runs,
            "skipped_rows": report.skipped_rows,
            "first_problems": report.first_problems,
            "skipped_files": report.skipped_files,
            "counts": report.counts,
            "stages": stages,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if !a.quiet {
        for (path, why) in &report.skipped_files {
            eprintln!("not read: {path}: {why}");
        }
        outln!(
            "wrote {} ({})",
            report.output.display(),
            human(report.file_size)
        );
        outln!("  edition  {}", report.identity.edition_uri);
        outln!("  version  {}", report.identity.version_uri);
        for (k, v) in &report.counts {
            outln!("  {k:<24} {v}");
        }
        outln!(
            "  time {:.2} s, peak RSS {}, {} sorted runs spilled",
            report.wall_seconds,
            report
                .peak_rss
                .map(human)
                .unwrap_or_else(|| "unknown".into()),
            report.spilled_runs
        );
        if report.skipped_rows > 0 {
            outln!(
                "  skipped {} malformed rows (--lenient); first ones:",
                report.skipped_rows
            );
            for p in &report.first_problems {
                outln!("    {p}");
            }
        }
    }
    Ok(())
}

/// Maps an edition file (reading it if mapping fails) and opens it.
pub(crate) fn open(file: &Path) -> Result<Edition<EditionBytes>> {
    let loaded = txmap_load::load(file, LoadMode::Mmap)?;
    Edition::open(loaded.bytes).with_context(|| format!("{}", file.display()))
}

/// `txmap sync`: one run of every feed (or `feed`), then a reload of the
/// server when the served folder changed; with `schedule`, again every so
/// many hours (a failed run is reported and the next one tried).
fn sync(config: &Path, feed: Option<&str>, schedule: Option<f64>) -> Result<()> {
    let c = txmap_sync::SyncConfig::load(config).map_err(anyhow::Error::msg)?;
    let every = match schedule {
        None => None,
        Some(h) if h.is_finite() && h > 0.0 => Some(std::time::Duration::from_secs_f64(h * 3600.0)),
        Some(h) => bail!("--schedule {h}: must be a number of hours above 0"),
    };
    let mut client = txmap_sync::fetch::Client::new(c.credentials.clone());
    loop {
        let run = txmap_sync::sync(&c, feed, &mut client, &mut |line| {
            tracing::info!("{line}");
        });
        let outcome = match run {
            Ok(report) => {
                for (version, file) in &report.installed {
                    outln!("installed {version}\t{}", file.display());
                }
                for version in &report.retracted {
                    outln!("retracted {version}");
                }
                outln!(
                    "{} installed, {} retracted, {} unchanged",
                    report.installed.len(),
                    report.retracted.len(),
                    report.unchanged
                );
                match (&c.reload, report.changed()) {
                    (Some(admin), true) => reload(None, Some(admin.clone()), true),
                    _ => Ok(()),
                }
            }
            Err(e) => Err(anyhow::Error::msg(format!("sync: {e}"))),
        };
        let Some(every) = every else {
            return outcome;
        };
        if let Err(e) = outcome {
            tracing::error!(
                "{e:#}; next run in {:.1} hours",
                every.as_secs_f64() / 3600.0
            );
        }
        std::thread::sleep(every);
    }
}

/// A new token of 32 random bytes from the kernel, as 64 hex digits, and
/// its config entry.
fn token(name: &str, scopes: &[String]) -> Result<()> {
    use std::io::Read;
    for s in scopes {
        if !matches!(s.as_str(), "read" | "write" | "admin") {
            bail!("--scope {s}: must be read, write or admin");
        }
    }
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom")?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let scopes: Vec<String> = scopes.iter().map(|s| format!("{s:?}")).collect();
    outln!("token: {token}");
    outln!();
    outln!("[[auth.tokens]]");
    outln!("name = {name:?}");
    outln!("sha256 = \"{}\"", txmap_server::auth::hash(&token));
    outln!("scopes = [{}]", scopes.join(", "));
    Ok(())
}

/// `POST /admin/reload` to the server `config` describes: one HTTP/1.1
/// exchange over a plain socket (the admin listener is a local address).
fn reload(config: Option<&Path>, admin: Option<String>, wait: bool) -> Result<()> {
    use std::io::{Read, Write};
    let (listen, text_token) = match (config, admin) {
        (_, Some(address)) => (address, None),
        (Some(config), None) => {
            let c = txmap_server::config::Config::load(config)?;
            let Some(listen) = c.admin.listen else {
                bail!(
                    "{}: no [admin] listen: the server has no admin listener",
                    config.display()
                );
            };
            (listen, c.http.admin_token)
        }
        (None, None) => bail!("--config or --admin names the server"),
    };
    // The token from the environment, or a file it names (a systemd
    // credential), or the config's text token.
    let from_file = match std::env::var("TXMAP_ADMIN_TOKEN_FILE") {
        Ok(f) if !f.is_empty() => Some(
            std::fs::read_to_string(&f).with_context(|| format!("TXMAP_ADMIN_TOKEN_FILE {f}"))?,
        ),
        _ => None,
    };
    let Some(token) = std::env::var("TXMAP_ADMIN_TOKEN")
        .ok()
        .or(from_file)
        .filter(|t| !t.trim().is_empty())
        .or(text_token)
    else {
        bail!(
            "no admin token: set TXMAP_ADMIN_TOKEN (or TXMAP_ADMIN_TOKEN_FILE) to a token with the admin scope"
        );
    };
    let token = token.trim().to_owned();
    let mut s = std::net::TcpStream::connect(&listen)
        .with_context(|| format!("connecting to the admin listener at {listen}"))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(3600)))?;
    write!(
        s,
        "POST /admin/reload?wait={wait} HTTP/1.1\r\nHost: {listen}\r\nAuthorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = String::new();
    s.read_to_string(&mut answer)
        .with_context(|| format!("reading the answer of {listen}"))?;
    let status = answer.split(' ').nth(1).unwrap_or_default().to_owned();
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    match status.as_str() {
        "200" | "202" => {
            outln!("{}", body.trim());
            Ok(())
        }
        _ => {
            let why = serde_json::from_str::<serde_json::Value>(body)
                .ok()
                .and_then(|v| v["issue"][0]["details"]["text"].as_str().map(str::to_owned))
                .unwrap_or_else(|| body.trim().to_owned());
            bail!("reload at {listen}: {status}: {why}")
        }
    }
}

fn verify(file: PathBuf) -> Result<()> {
    if let Some(cs) = open_code_system(&file)? {
        cs.verify(|_| {})
            .with_context(|| format!("{}", file.display()))?;
        outln!(
            "{}: ok (code system {}|{}, {} concepts)",
            file.display(),
            cs.meta("url"),
            cs.meta("version"),
            cs.len()
        );
        return Ok(());
    }
    let e = open(&file)?;
    e.verify(|_| {})
        .with_context(|| format!("{}", file.display()))?;
    outln!(
        "{}: ok ({} sections, {})",
        file.display(),
        e.sections().len(),
        e.identity().version_uri
    );
    Ok(())
}

fn inspect(file: PathBuf, as_json: bool) -> Result<()> {
    if let Some(cs) = open_code_system(&file)? {
        return inspect_code_system(&file, &cs, as_json);
    }
    let e = open(&file)?;
    let id = e.identity();
    let sections = e.sections();
    if as_json {
        let out = json!({
            "file": file,
            "size": e.bytes().as_ref().len(),
            "edition_uri": id.edition_uri,
            "version_uri": id.version_uri,
            "edition_module": id.edition_module.to_string(),
            "effective_time": id.effective_time,
            "status": id.status.as_str(),
            "default_language_refset": id.default_language_refset.to_string(),
            "txmap_version": id.txmap_version,
            "concepts": e.concept_count(),
            "descriptions": e.description_count(),
            "metadata": e.metadata(),
            "sections": sections.iter().map(|s| json!({"name": s.name, "offset": s.offset, "len": s.len, "count": s.count})).collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!("{}", file.display());
    outln!("  edition   {}", id.edition_uri);
    outln!("  version   {}", id.version_uri);
    outln!("  status    {}", id.status);
    outln!("  size      {}", human(e.bytes().as_ref().len() as u64));
    outln!("  concepts  {}", e.concept_count());
    outln!("  descriptions {}", e.description_count());
    for (k, v) in e.metadata() {
        if let Some(k) = k.strip_prefix("count.") {
            outln!("  {k:<24} {v}");
        }
    }
    outln!(
        "  {:<26} {:>12} {:>12} {:>12}",
        "section",
        "offset",
        "bytes",
        "count"
    );
    for s in &sections {
        outln!(
            "  {:<26} {:>12} {:>12} {:>12}",
            s.name,
            s.offset,
            s.len,
            s.count
        );
    }
    Ok(())
}

fn lookup(file: PathBuf, sctid: u64, as_json: bool) -> Result<()> {
    let e = open(&file)?;
    let ctx = || format!("{}", file.display());
    let Some(c) = e.concept(sctid).with_context(ctx)? else {
        bail!(
            "{}: no concept {sctid} in {}",
            file.display(),
            e.identity().version_uri
        );
    };
    let name = |o: u32| -> Result<String> {
        let id = e.sctid(o)?;
        Ok(format!("{id} |{}|", e.preferred_term(o)?.unwrap_or("")))
    };
    let label = |id: u64| -> Result<String> {
        Ok(match e.ordinal(id) {
            Some(o) => name(o)?,
            None => id.to_string(),
        })
    };
    let descriptions = e.descriptions(c.ordinal).with_context(ctx)?;
    let parents: Vec<String> = e
        .parents(c.ordinal)?
        .iter()
        .map(name)
        .collect::<Result<_>>()?;
    let children = e.children(c.ordinal)?;
    let attributes = e.attributes(c.ordinal)?;
    let refsets = e.component_refsets(sctid)?;
    let associations = e.associations(sctid)?;
    if as_json {
        let out = json!({
            "id": sctid.to_string(),
            "active": c.active,
            "defined": c.defined,
            "module": c.module.to_string(),
            "effectiveTime": c.effective_time,
            "preferredTerm": e.preferred_term(c.ordinal)?,
            "descriptions": descriptions.iter().map(|d| json!({
                "id": d.id.to_string(), "active": d.active, "type": d.type_id.to_string(),
                "language": d.language, "term": d.term,
                "acceptability": e.acceptability(d.ordinal).unwrap_or_default().iter().map(|(r, a)| json!([r.to_string(), a.to_string()])).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "parents": parents,
            "children": children.len(),
            "ancestors": e.ancestors(c.ordinal)?.len(),
            "descendants": e.descendants(c.ordinal)?.len(),
            "attributes": attributes.iter().map(|r| json!({"group": r.group, "type": r.type_id.to_string(), "value": r.target.to_string()})).collect::<Vec<_>>(),
            "refsets": refsets.iter().map(|m| json!({"refset": m.refset.to_string(), "fields": m.fields})).collect::<Vec<_>>(),
            "associations": associations.iter().map(|a| json!({"refset": a.refset.to_string(), "target": a.target.to_string()})).collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!("{}", label(sctid)?);
    outln!(
        "  {} {}, module {}, effective {}",
        if c.active { "active" } else { "inactive" },
        if c.defined { "defined" } else { "primitive" },
        c.module,
        c.effective_time
    );
    for d in &descriptions {
        let kind = match d.type_id {
            900000000000003001 => "FSN",
            900000000000013009 => "SYN",
            900000000000550004 => "DEF",
            _ => "???",
        };
        let status = if d.active { "" } else { " (inactive)" };
        outln!("  {kind} {} [{}] {}{status}", d.id, d.language, d.term);
    }
    for p in &parents {
        outln!("  is a {p}");
    }
    outln!(
        "  {} children, {} ancestors, {} descendants",
        children.len(),
        e.ancestors(c.ordinal)?.len(),
        e.descendants(c.ordinal)?.len()
    );
    for r in &attributes {
        outln!(
            "  group {} {} = {}",
            r.group,
            label(r.type_id)?,
            label(r.target)?
        );
    }
    for v in e.concrete_values(c.ordinal)? {
        outln!("  group {} {} = {}", v.group, label(v.type_id)?, v.value);
    }
    for a in &associations {
        outln!("  {} -> {}", label(a.refset)?, label(a.target)?);
    }
    for m in &refsets {
        outln!("  member of {} {}", label(m.refset)?, m.fields);
    }
    Ok(())
}

fn synth(a: SynthArgs) -> Result<()> {
    if a.rxnorm {
        let n = u32::try_from(a.concepts / 5).context("--concepts: too many concepts")?;
        txmap_codesystems::synth::write_rxnorm(&a.out, n)
            .with_context(|| format!("writing {}", a.out.display()))?;
        outln!(
            "wrote an RxNorm release of about {} concepts to {}",
            n * 4,
            a.out.display()
        );
        return Ok(());
    }
    if a.loinc {
        let terms = u32::try_from(a.concepts).context("--concepts: too many terms")?;
        txmap_codesystems::synth::write_release(&a.out, txmap_codesystems::synth::Shape { terms })
            .with_context(|| format!("writing {}", a.out.display()))?;
        outln!(
            "wrote a LOINC release of {terms} terms to {}",
            a.out.display()
        );
        return Ok(());
    }
    let mut config = txmap_synth::SynthConfig::new(a.concepts, a.seed);
    if let Some(t) = a.effective_time {
        config.effective_time = t;
    }
    if let Some(base_seed) = a.extension_of_seed {
        let mut ext =
            txmap_synth::ExtensionConfig::new(a.base_concepts.unwrap_or(0), base_seed, a.namespace);
        ext.base_effective_time = a.base_effective_time;
        config.extension = Some(ext);
    }
    let summary = txmap_synth::generate(&config, &a.out)
        .with_context(|| format!("writing {}", a.out.display()))?;
    outln!("wrote {}", a.out.display());
    for (file, rows) in &summary.files {
        outln!("  {rows:>10}  {file}");
    }
    Ok(())
}

fn serve(a: ServeArgs) -> Result<()> {
    crate::logging::init();
    let data_dir = a.data_dir.unwrap_or_else(default_data_dir);
    let options = txmap_server::ServeOptions {
        config: a.config,
        listen: a.listen,
        reuse_port: a.reuse_port,
        data_dir,
    };
    txmap_server::run(options)?;
    Ok(())
}

/// `$XDG_DATA_HOME/txmap`, else `~/.local/share/txmap`, else `./txmap-data`.
fn default_data_dir() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("txmap");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h).join(".local/share/txmap");
    }
    PathBuf::from("txmap-data")
}

fn conformance(a: ConformanceArgs) -> Result<()> {
    use std::io::Write as _;
    use txmap_conformance::{HttpTransport, RunOptions, Selection, TestCases, report};

    let cases = TestCases::load(&a.suite_dir).map_err(anyhow::Error::msg)?;
    let externals = match &a.externals {
        Some(f) => Some(cases.load_externals(f).map_err(anyhow::Error::msg)?),
        None => None,
    };
    let mut selection = Selection::with_modes(&a.modes);
    selection.filter = a.filter.clone();
    selection.suites = a.suite.clone();
    let server = a.server.trim_end_matches('/');
    let mut reports = Vec::new();
    for fhir in &a.fhir {
        let fhir = fhir.trim().to_ascii_lowercase();
        if fhir != "r4" && fhir != "r5" {
            bail!("--fhir {fhir}: expected r4 or r5");
        }
        let transport = HttpTransport::new(&format!("{server}/{fhir}"))
            .map_err(anyhow::Error::msg)?
            .with_read_timeout(std::time::Duration::from_secs(a.timeout));
        let options = RunOptions {
            selection: selection.clone(),
            strict_strings: a.strict_strings,
            externals: externals.clone(),
            label: Some(fhir.clone()),
            no_cache_control: a.no_cache_control,
        };
        let mut stdout = std::io::stdout().lock();
        let mut rep = txmap_conformance::run(&cases, &transport, &options, &mut |r| {
            let _ = writeln!(stdout, "{}", report::test_line(r));
            let _ = stdout.flush();
        });
        drop(stdout);
        let wanted = if fhir == "r4" { "4.0.1" } else { "5.0.0" };
        if let Some(v) = rep.fhir_version.as_deref().filter(|v| *v != wanted) {
            rep.notes.push(format!(
                "the {fhir} endpoint reports FHIR {v}: tests ran with that client"
            ));
        }
        reports.push(rep);
    }
    out!("{}", report::summary(&reports));
    if let Some(path) = &a.report {
        std::fs::write(path, report::report_json(&reports).to_pretty())
            .with_context(|| format!("writing {}", path.display()))?;
        outln!("report: {}", path.display());
    }
    if let Some(dir) = &a.output {
        let n = report::write_failures(dir, &reports)
            .with_context(|| format!("writing under {}", dir.display()))?;
        outln!(
            "expected and actual of {n} failed tests under {}",
            dir.display()
        );
    }
    let started = reports.iter().all(|r| r.startup_error.is_none());
    let mut ok = started;
    if let Some(path) = &a.ratchet {
        let listed = report::read_ratchet(path).with_context(|| format!("{}", path.display()))?;
        let check = report::check_ratchet(&listed, &reports);
        for id in &check.regressed {
            outln!(
                "ratchet: {id} is listed in {} but did not pass",
                path.display()
            );
        }
        if !check.not_run.is_empty() {
            outln!(
                "ratchet: {} listed tests were not run (filtered out or unknown)",
                check.not_run.len()
            );
        }
        if a.update_ratchet {
            if started {
                let n = report::write_ratchet(path, &reports)
                    .with_context(|| format!("writing {}", path.display()))?;
                outln!("ratchet: wrote {n} passing tests to {}", path.display());
            } else {
                outln!("ratchet: not rewritten, since a run could not start");
            }
        } else {
            for id in &check.unlisted {
                outln!(
                    "ratchet: {id} passes but is not listed in {}: add it (--update-ratchet)",
                    path.display()
                );
            }
            if !check.regressed.is_empty() || !check.unlisted.is_empty() {
                ok = false;
            }
        }
    }
    // The final line is what CI's log reader looks for: nothing may follow
    // it, so failure is an exit status rather than an error message.
    outln!("{}", report::final_line(&reports));
    std::io::stdout().flush()?;
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}

/// A compiled code system file (LOINC), read into memory, or `None` when
/// the file is something else (an edition: the caller opens it as one).
fn open_code_system(file: &Path) -> Result<Option<txmap_codesystems::CodeSystemFile<Vec<u8>>>> {
    let f = std::fs::File::open(file).with_context(|| format!("{}", file.display()))?;
    let Ok(meta) = txmap_format::peek_metadata(&f) else {
        return Ok(None);
    };
    if meta.get("content").map(String::as_str) != Some(txmap_codesystems::file::CONTENT) {
        return Ok(None);
    }
    let bytes = std::fs::read(file).with_context(|| format!("{}", file.display()))?;
    let cs = txmap_codesystems::CodeSystemFile::open(bytes)
        .with_context(|| format!("{}", file.display()))?;
    Ok(Some(cs))
}

fn inspect_code_system(
    file: &Path,
    cs: &txmap_codesystems::CodeSystemFile<Vec<u8>>,
    as_json: bool,
) -> Result<()> {
    let container = txmap_format::Container::open(cs.bytes())?;
    let sections: Vec<_> = container
        .entries()
        .iter()
        .map(|e| {
            (
                txmap_format::SectionKind::describe(e.kind.get()),
                e.offset.get(),
                e.len.get(),
                e.count.get(),
            )
        })
        .collect();
    if as_json {
        let out = json!({
            "file": file,
            "size": cs.bytes().len(),
            "url": cs.meta("url"),
            "version": cs.meta("version"),
            "concepts": cs.len(),
            "metadata": cs.metadata(),
            "sections": sections.iter().map(|(name, offset, len, count)| json!({"name": name, "offset": offset, "len": len, "count": count})).collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!("{}", file.display());
    outln!("  code system {}|{}", cs.meta("url"), cs.meta("version"));
    outln!("  size      {}", human(cs.bytes().len() as u64));
    outln!("  concepts  {}", cs.len());
    outln!(
        "  {:<26} {:>12} {:>12} {:>12}",
        "section",
        "offset",
        "bytes",
        "count"
    );
    for (name, offset, len, count) in &sections {
        outln!("  {name:<26} {offset:>12} {len:>12} {count:>12}");
    }
    Ok(())
}

fn import_loinc(dir: &Path, a: &ImportArgs) -> Result<()> {
    let options = txmap_codesystems::ImportOptions {
        version: a.loinc_version.clone(),
        temp_dir: a.temp_dir.clone(),
    };
    let r = txmap_codesystems::loinc::import(dir, &a.out, &options)
        .with_context(|| format!("importing into {}", a.out.display()))?;
    let f = &r.file;
    report_compiled(
        a,
        txmap_codesystems::loinc::URL,
        &r.version,
        f,
        r.seconds,
        &r.absent,
        &[
            ("terms", r.terms),
            ("parts", r.parts),
            ("answer_lists", r.answer_lists),
            ("answers", r.answers),
            ("part_links", r.part_links),
            ("hierarchy_rows", r.hierarchy_rows),
            ("variant_designations", r.variant_designations),
            ("rows_skipped", r.skipped_rows),
            ("concepts", f.concepts),
            ("properties", f.properties),
            ("designations", f.designations),
            ("hierarchy_links", f.hierarchy_links),
            ("text_bytes", f.text_bytes),
        ],
    )
}

fn import_rxnorm(dir: &Path, a: &ImportArgs) -> Result<()> {
    let options = txmap_codesystems::ImportOptions {
        version: a.rxnorm_version.clone(),
        temp_dir: a.temp_dir.clone(),
    };
    let r = txmap_codesystems::rxnorm::import(dir, &a.out, &options)
        .with_context(|| format!("importing into {}", a.out.display()))?;
    let f = &r.file;
    report_compiled(
        a,
        txmap_codesystems::rxnorm::URL,
        &r.version,
        f,
        r.seconds,
        &r.absent,
        &[
            ("concepts", r.concepts),
            ("inactive", r.inactive),
            ("rxnorm_atoms", r.atoms),
            ("relationships", r.relationships),
            ("semantic_types", r.semantic_types),
            ("properties", f.properties),
            ("designations", f.designations),
            ("text_bytes", f.text_bytes),
        ],
    )
}

fn import_ndc(dir: &Path, a: &ImportArgs) -> Result<()> {
    let options = txmap_codesystems::ImportOptions {
        version: a.ndc_version.clone(),
        temp_dir: a.temp_dir.clone(),
    };
    let r = txmap_codesystems::ndc::import(dir, &a.out, &options)
        .with_context(|| format!("importing into {}", a.out.display()))?;
    let f = &r.file;
    report_compiled(
        a,
        txmap_codesystems::ndc::URL,
        &r.version,
        f,
        r.seconds,
        &[],
        &[
            ("products", r.products),
            ("packages", r.packages),
            ("inactive", r.inactive),
            ("rows_skipped", r.skipped_rows),
            ("properties", f.properties),
            ("text_bytes", f.text_bytes),
        ],
    )
}

/// What `import --loinc`, `--rxnorm` and `--ndc` say: the file, the code system,
/// the counts, the time and peak memory, as JSON or as lines.
fn report_compiled(
    a: &ImportArgs,
    url: &str,
    version: &str,
    file: &txmap_codesystems::BuildSummary,
    seconds: f64,
    absent: &[String],
    counts: &[(&str, u64)],
) -> Result<()> {
    let peak_rss = txmap_import::memory::peak_rss();
    if a.json {
        let counts: serde_json::Map<String, serde_json::Value> = counts
            .iter()
            .map(|(k, v)| ((*k).to_owned(), json!(v)))
            .collect();
        let out = json!({
            "output": a.out,
            "url": url,
            "version": version,
            "file_size": file.file_bytes,
            "wall_seconds": seconds,
            "peak_rss": peak_rss,
            "absent_files": absent,
            "counts": counts,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if a.quiet {
        return Ok(());
    }
    for name in absent {
        eprintln!("not in the release: {name}");
    }
    outln!("wrote {} ({})", a.out.display(), human(file.file_bytes));
    outln!("  code system {url}|{version}");
    for (k, v) in counts {
        outln!("  {:<24} {v}", k.replace('_', " "));
    }
    outln!(
        "  time {seconds:.2} s, peak RSS {}",
        peak_rss.map_or_else(|| "unknown".to_owned(), human)
    );
    Ok(())
}
