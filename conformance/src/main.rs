//! `msp-conformance <DIR>`: replays every `*.ndjson` transcript under DIR through msp-types.
//!
//! Prints one line per frame that does not round-trip (`file:line: method: pointer: reason`),
//! then the summary line (see the library docs for the counters). Exit status: 0 when every
//! frame is lossless, 1 when some are not, 2 when the input is unusable (no such folder, no
//! transcript in it, a line that is not a JSON `{"dir", "raw"}` record). A `raw` frame that is
//! not JSON-RPC is a failure of that frame, not unusable input.
//!
//! `msp-conformance fold [--rules default|python-sdk-1.4.13] [--out DIR] PATH`: folds each
//! transcript (PATH a file, or a folder of them) with `msp-session` and prints one JSON
//! document per transcript (see `msp_conformance::fold`), or writes `DIR/<scenario>.json`.
//! Exit status 0, or 2 when the input is unusable.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use msp_conformance::fold::{self, Rules};
use msp_conformance::{transcript, Runner};

const USAGE: &str = "usage: msp-conformance <DIR>\n       \
     msp-conformance fold [--rules default|python-sdk-1.4.13] [--out DIR] PATH";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("fold") => fold_command(&args[1..]),
        Some("--help" | "-h") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => check_command(&args),
    }
}

fn check_command(args: &[String]) -> ExitCode {
    let [dir] = args else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let runner = match Runner::new() {
        Ok(runner) => runner,
        Err(e) => {
            eprintln!("error: the schema does not build a model: {e}");
            return ExitCode::from(2);
        }
    };
    let report = match runner.run(Path::new(dir)) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for failure in &report.failures {
        let _ = writeln!(out, "{failure}");
    }
    let _ = writeln!(out, "{}", report.summary());
    let _ = out.flush();
    if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn fold_command(args: &[String]) -> ExitCode {
    let mut rules = Rules::Default;
    let mut out: Option<PathBuf> = None;
    let mut path = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rules" => match args.next().and_then(|name| Rules::by_name(name)) {
                Some(named) => rules = named,
                None => {
                    eprintln!("error: --rules takes default or python-sdk-1.4.13\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--out" => match args.next() {
                Some(dir) => out = Some(dir.into()),
                None => {
                    eprintln!("error: --out takes a folder\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            other if path.is_none() && !other.starts_with("--") => {
                path = Some(PathBuf::from(other))
            }
            other => {
                eprintln!("error: unexpected argument {other}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(path) = path else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let files = match path.is_file() {
        true => Ok(vec![path.clone()]),
        false => transcript::files(&path),
    };
    let files = match files {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(dir) = &out {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    }
    let stdout = std::io::stdout();
    let mut stdout = std::io::BufWriter::new(stdout.lock());
    for file in files {
        let scenario = fold::scenario_name(&file);
        let document = match fold::fold_file(&file, &scenario, rules) {
            Ok(document) => document,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let text = fold::to_text(&document);
        let written = match &out {
            Some(dir) => std::fs::write(dir.join(format!("{scenario}.json")), text),
            None => stdout.write_all(text.as_bytes()),
        };
        if let Err(e) = written {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    let _ = stdout.flush();
    ExitCode::SUCCESS
}
