//! `bench-gen msp <SCHEMA> <OUT_DIR>` and `bench-gen typify <SCHEMA> <OUT.rs>`: both
//! generators from one build, for `scripts/bench_build_time.sh`.

use std::process::ExitCode;

fn run(args: &[String]) -> Result<(), String> {
    let [generator, schema, out] = args else {
        return Err("usage: bench-gen msp|typify <SCHEMA> <OUT>".to_owned());
    };
    let text = std::fs::read_to_string(schema).map_err(|e| format!("{schema}: {e}"))?;
    match generator.as_str() {
        "msp" => {
            let options = msp_codegen::Options::new(schema.clone());
            let output = msp_codegen::generate(&text, &options).map_err(|e| e.to_string())?;
            msp_codegen::write(out.as_ref(), &output.files).map_err(|e| e.to_string())?;
        }
        "typify" => {
            let source = msp_bench::typify_gen::typify_source(&text)?;
            std::fs::write(out, source).map_err(|e| format!("{out}: {e}"))?;
        }
        other => return Err(format!("unknown generator `{other}`")),
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-gen: {e}");
            ExitCode::FAILURE
        }
    }
}
