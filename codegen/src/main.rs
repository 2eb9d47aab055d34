//! `msp-codegen generate [SCHEMA] [--out DIR] [--crate-doc FILE]` and `msp-codegen check ...`.
//!
//! Without SCHEMA the project's schema and crate docs, embedded in the binary, are used;
//! without `--out`, the folder `generated`. Exit codes: 0 done (or current), 1 stale (`check`), 2 bad input
//! or usage.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: msp-codegen generate [SCHEMA] [--out DIR] [--crate-doc FILE]\n       \
                     msp-codegen check [SCHEMA] [--out DIR] [--crate-doc FILE]\n\
                     SCHEMA defaults to the embedded schema/msp.schema.json (with its crate docs),\n\
                     DIR to `generated`; FILE is Markdown added to the crate docs.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(args) = parse_args(&args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let Args {
        command,
        schema,
        out,
        crate_doc,
    } = args;
    let result = match &schema {
        Some(path) => options_for(path, &out, crate_doc.as_deref()).and_then(|options| {
            let text =
                std::fs::read_to_string(path).map_err(|e| msp_codegen::Error::io(path, &e))?;
            msp_codegen::generate(&text, &options)
        }),
        None => msp_codegen::generate(
            msp_codegen::PROJECT_SCHEMA,
            &msp_codegen::Options::project(),
        ),
    };
    let rerun = match &schema {
        Some(path) => command_line(path, &out, crate_doc.as_deref()),
        None => "cargo run -p msp-codegen -- generate".to_owned(),
    };
    let output = match result {
        Ok(output) => output,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match command.as_str() {
        "generate" => match msp_codegen::write(&out, &output.files) {
            Ok(report) => {
                for name in &report.removed {
                    println!("removed {}", out.join(name).display());
                }
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
            eprintln!("run: {rerun}");
            ExitCode::from(1)
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

struct Args {
    command: String,
    schema: Option<String>,
    out: PathBuf,
    crate_doc: Option<String>,
}

// `COMMAND [SCHEMA] [--out DIR] [--crate-doc FILE]`, flags and positionals in any order.
fn parse_args(args: &[String]) -> Option<Args> {
    let (command, rest) = args.split_first()?;
    let mut parsed = Args {
        command: command.clone(),
        schema: None,
        out: PathBuf::from("generated"),
        crate_doc: None,
    };
    let mut rest = rest.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--out" => parsed.out = PathBuf::from(rest.next()?),
            "--crate-doc" => parsed.crate_doc = Some(rest.next()?.clone()),
            flag if flag.starts_with('-') => return None,
            path if parsed.schema.is_none() => parsed.schema = Some(path.to_owned()),
            _ => return None,
        }
    }
    Some(parsed)
}

/// The options of a run on a named schema; the header's command is this run's.
fn options_for(
    schema: &str,
    out: &std::path::Path,
    crate_doc: Option<&str>,
) -> Result<msp_codegen::Options, msp_codegen::Error> {
    let mut options =
        msp_codegen::Options::new(schema).command(command_line(schema, out, crate_doc));
    if let Some(path) = crate_doc {
        let text = std::fs::read_to_string(path).map_err(|e| msp_codegen::Error::io(path, &e))?;
        options = options.crate_doc(text);
    }
    Ok(options)
}

fn command_line(schema: &str, out: &std::path::Path, crate_doc: Option<&str>) -> String {
    let mut line = format!("msp-codegen generate {schema} --out {}", out.display());
    if let Some(path) = crate_doc {
        line.push_str(&format!(" --crate-doc {path}"));
    }
    line
}
