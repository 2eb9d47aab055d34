//! `msp-codegen generate [SCHEMA] [--out DIR] [--crate-doc FILE]` and `msp-codegen check ...`.
//!
//! Without SCHEMA the project's schema and crate docs, embedded in the binary, are used;
//! without `--out`, the folder `generated`. Exit codes: 0 done (or current, or `--help`), 1 stale
//! (`check`), 2 bad input or usage.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: msp-codegen generate [SCHEMA] [--out DIR] [--crate-doc FILE] [--protocol NAME]\n       \
                     [--crate-path PATH] [--module PATH]\n       \
                     msp-codegen check [SCHEMA] [--out DIR] [same flags]\n\
                     SCHEMA defaults to the embedded schema/msp.schema.json (with its crate docs),\n\
                     DIR to `generated`; FILE is Markdown added to the crate docs; NAME names the\n\
                     protocol in them (default: the schema's title); PATH is how doc tests reach the\n\
                     output (`my_crate`, `my_crate::protocol`; without it examples are not run);\n\
                     --module crate::msp makes a module of a bigger crate (root file mod.rs).\n\
                     Exit codes: 0 done (or current), 1 stale (check), 2 bad input or usage.";

/// Printed after generating for another schema: the output builds without these, and they turn
/// its optional parts on.
const FEATURES: &str = "msp-codegen: the output needs `serde` (feature `derive`) and `serde_json` \
                        (feature `raw_value`); to turn on its optional parts, add to Cargo.toml:\n\
                        [features]\n\
                        experimental = []            # what the schema marks x-msp-stability: experimental\n\
                        reflect = []                 # decode, re-encode and validate by definition name\n\
                        sample = []                  # random schema-valid values of every type\n\
                        schemars = [\"dep:schemars\"]  # JsonSchema for every type (with schemars = { version = \"1\", optional = true })";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args
        .iter()
        .any(|a| a == "-h" || a == "--help" || a == "help")
    {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let Some(args) = parse_args(&args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let rerun = match &args.schema {
        Some(path) => command_line(&args, path),
        None => "cargo run -p msp-codegen -- generate".to_owned(),
    };
    let result = match &args.schema {
        Some(path) => {
            let base = msp_codegen::Options::new(path.as_str()).command(rerun.as_str());
            options_for(&args, base).and_then(|options| {
                let text =
                    std::fs::read_to_string(path).map_err(|e| msp_codegen::Error::io(path, &e))?;
                msp_codegen::generate(&text, &options)
            })
        }
        None => options_for(&args, msp_codegen::Options::project())
            .and_then(|options| msp_codegen::generate(msp_codegen::PROJECT_SCHEMA, &options)),
    };
    let args_schema_given = args.schema.is_some();
    let Args { command, out, .. } = args;
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
                if args_schema_given {
                    println!("{FEATURES}");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(2)
            }
        },
        "check" => {
            let report = msp_codegen::render::write::diff(&out, &output.files);
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
    protocol: Option<String>,
    crate_path: Option<String>,
    module: Option<String>,
}

// `COMMAND [SCHEMA] [--out DIR] [--crate-doc FILE]`, flags and positionals in any order.
fn parse_args(args: &[String]) -> Option<Args> {
    let (command, rest) = args.split_first()?;
    let mut parsed = Args {
        command: command.clone(),
        schema: None,
        out: PathBuf::from("generated"),
        crate_doc: None,
        protocol: None,
        crate_path: None,
        module: None,
    };
    let mut rest = rest.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--out" => parsed.out = PathBuf::from(rest.next()?),
            "--crate-doc" => parsed.crate_doc = Some(rest.next()?.clone()),
            "--protocol" => parsed.protocol = Some(rest.next()?.clone()),
            "--crate-path" => parsed.crate_path = Some(rest.next()?.clone()),
            "--module" => parsed.module = Some(rest.next()?.clone()),
            flag if flag.starts_with('-') => return None,
            path if parsed.schema.is_none() => parsed.schema = Some(path.to_owned()),
            _ => return None,
        }
    }
    Some(parsed)
}

/// `base` with the run's `--protocol` and `--crate-doc`.
fn options_for(
    args: &Args,
    base: msp_codegen::Options,
) -> Result<msp_codegen::Options, msp_codegen::Error> {
    let mut options = base;
    if let Some(name) = &args.protocol {
        options = options.protocol(name.clone());
    }
    if let Some(path) = &args.crate_path {
        options = options.crate_path(path.clone());
    }
    if let Some(path) = &args.module {
        options = options.module(path.clone());
    }
    if let Some(path) = &args.crate_doc {
        let text = std::fs::read_to_string(path).map_err(|e| msp_codegen::Error::io(path, &e))?;
        options = options.crate_doc(text);
    }
    Ok(options)
}

fn command_line(args: &Args, schema: &str) -> String {
    let mut line = format!("msp-codegen generate {schema} --out {}", args.out.display());
    if let Some(name) = &args.protocol {
        line.push_str(&format!(" --protocol {name:?}"));
    }
    if let Some(path) = &args.crate_path {
        line.push_str(&format!(" --crate-path {path}"));
    }
    if let Some(path) = &args.module {
        line.push_str(&format!(" --module {path}"));
    }
    if let Some(path) = &args.crate_doc {
        line.push_str(&format!(" --crate-doc {path}"));
    }
    line
}
