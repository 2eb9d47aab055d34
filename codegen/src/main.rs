//! `msp-codegen generate [SCHEMA] [--out DIR]` and `msp-codegen check [SCHEMA] [--out DIR]`.
//!
//! Without SCHEMA the project's schema, embedded in the binary, is used; without `--out`,
//! the folder `generated`. Exit codes: 0 done (or current), 1 stale (`check`), 2 bad input
//! or usage.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: msp-codegen generate [SCHEMA] [--out DIR]\n       \
                     msp-codegen check [SCHEMA] [--out DIR]\n\
                     SCHEMA defaults to the embedded schema/msp.schema.json, DIR to `generated`.";

/// The project's schema, for runs that name none.
// `codegen/msp.schema.json` links to the workspace's `schema/msp.schema.json`, so that the
// packaged crate carries the schema it embeds.
const DEFAULT_SCHEMA: &str = include_str!("../msp.schema.json");
const DEFAULT_SCHEMA_NAME: &str = "schema/msp.schema.json";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, schema, out)) = parse_args(&args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match &schema {
        Some(path) => msp_codegen::generate_file(path.as_ref(), path),
        None => msp_codegen::generate(
            DEFAULT_SCHEMA,
            &msp_codegen::Options {
                schema_path: DEFAULT_SCHEMA_NAME.into(),
            },
        ),
    };
    let schema = schema.unwrap_or_else(|| DEFAULT_SCHEMA_NAME.to_owned());
    let output = match result {
        Ok(output) => output,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match command {
        "generate" => match msp_codegen::write(&out, &output.files) {
            Ok(report) => {
                println!(
                    "msp-codegen: {} files in {} ({} written, {} removed)",
                    output.files.len(),
                    out.display(),
                    report.written.len(),
                    report.removed.len()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(2)
            }
        },
        "check" => {
            let report = msp_codegen::write::diff(&out, &output.files);
            if report.written.is_empty() && report.removed.is_empty() {
                println!("msp-codegen: {} is current", out.display());
                return ExitCode::SUCCESS;
            }
            for name in &report.written {
                eprintln!("stale: {name} differs from fresh output");
            }
            for name in &report.removed {
                eprintln!("stale: {name} is no longer generated");
            }
            eprintln!(
                "run: cargo run -p msp-codegen -- generate {schema} --out {}",
                out.display()
            );
            ExitCode::from(1)
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

// `COMMAND [SCHEMA] [--out DIR]`, flags and positionals in any order.
fn parse_args(args: &[String]) -> Option<(&str, Option<String>, PathBuf)> {
    let (command, rest) = args.split_first()?;
    let mut schema = None;
    let mut out = PathBuf::from("generated");
    let mut rest = rest.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--out" => out = PathBuf::from(rest.next()?),
            flag if flag.starts_with('-') => return None,
            path if schema.is_none() => schema = Some(path.to_owned()),
            _ => return None,
        }
    }
    Some((command.as_str(), schema, out))
}
