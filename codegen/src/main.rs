//! `msp-codegen generate <SCHEMA> --out <DIR>` and `msp-codegen check <SCHEMA> --out <DIR>`.
//!
//! Exit codes: 0 done (or current), 1 stale (`check`), 2 bad input or usage.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: msp-codegen generate <SCHEMA> --out <DIR>\n       msp-codegen check <SCHEMA> --out <DIR>";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, schema, out) = match args.as_slice() {
        [command, schema, flag, out] if flag == "--out" => {
            (command.as_str(), schema, PathBuf::from(out))
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let output = match msp_codegen::generate_file(schema.as_ref(), schema) {
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
