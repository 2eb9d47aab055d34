//! Generation: msp-codegen against typify on the same schema text, in this process.
//! Prints the median wall time, the peak of live heap bytes, and the ratios msp-codegen/typify.

use std::time::{Duration, Instant};

use msp_bench::alloc::{peak_during, Counting};
use msp_bench::measure::{median, selected, Report};
use msp_bench::typify_gen::typify_source;

#[global_allocator]
static ALLOC: Counting = Counting;

/// One generator run: Ok(bytes of Rust produced) or the generator's error.
type Generator = fn(&str) -> Result<usize, String>;

fn msp_codegen(text: &str) -> Result<usize, String> {
    let options = msp_codegen::Options::new("input.schema.json");
    let output = msp_codegen::generate(text, &options).map_err(|e| e.to_string())?;
    Ok(output.files.values().map(String::len).sum())
}

fn typify(text: &str) -> Result<usize, String> {
    typify_source(text).map(|source| source.len())
}

struct Run {
    time: Duration,
    peak: usize,
    bytes: usize,
}

/// A first run for the peak and the output size (and to fail early), then timed runs.
fn run(generate: Generator, text: &str, runs: usize) -> Result<Run, String> {
    let (first, peak) = peak_during(|| generate(text));
    let bytes = first?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let out = generate(text);
        times.push(start.elapsed());
        drop(out);
    }
    Ok(Run {
        time: median(&mut times),
        peak,
        bytes,
    })
}

fn main() {
    let runs = std::env::var("MSP_BENCH_GEN_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5usize)
        .max(1);
    let mut inputs = vec![(
        "schema",
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/msp.schema.json"),
    )];
    match msp_bench::corpus::shared_dir() {
        Ok(shared) => inputs.insert(
            0,
            (
                "bundle",
                shared.join("msp-upstream/experimental/msp.schema.json"),
            ),
        ),
        Err(reason) => println!("bundle skipped: {reason}"),
    }
    let mut report = Report::new("generation");
    println!("generation: median of {runs} runs; peak = most live heap bytes above the start");
    for (input, path) in inputs {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                println!("{input} skipped: {}: {e}", path.display());
                continue;
            }
        };
        println!("\n{input}: {} ({} bytes)", path.display(), text.len());
        let mut results = Vec::new();
        for (name, generate) in [
            ("msp-codegen", msp_codegen as Generator),
            ("typify", typify),
        ] {
            if !selected(&format!("{input}.{name}")) {
                results.push(None);
                continue;
            }
            match run(generate, &text, runs) {
                Ok(r) => {
                    println!(
                        "  {name:<12} {:>9.1} ms  peak {:>8.1} MB  output {:>8} bytes",
                        r.time.as_secs_f64() * 1e3,
                        r.peak as f64 / 1e6,
                        r.bytes
                    );
                    report.put(format!("{input}.{name}.ms"), r.time.as_secs_f64() * 1e3);
                    report.put(format!("{input}.{name}.peak_bytes"), r.peak);
                    report.put(format!("{input}.{name}.output_bytes"), r.bytes);
                    results.push(Some(r));
                }
                Err(e) => {
                    let e = e.lines().next().unwrap_or_default().to_owned();
                    println!("  {name:<12} failed: {e}");
                    report.put(format!("{input}.{name}.error"), e);
                    results.push(None);
                }
            }
        }
        if let [Some(ours), Some(theirs)] = &results[..] {
            let time = ours.time.as_secs_f64() / theirs.time.as_secs_f64();
            let peak = ours.peak as f64 / theirs.peak as f64;
            println!("  ratio msp-codegen/typify: time {time:.3}, peak memory {peak:.3}");
            report.put(format!("{input}.ratio.time"), format!("{time:.4}"));
            report.put(format!("{input}.ratio.peak"), format!("{peak:.4}"));
        }
    }
    report.save();
}
