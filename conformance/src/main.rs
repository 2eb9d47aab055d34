//! `msp-conformance <DIR>`: replays every `*.ndjson` transcript under DIR through msp-types.
//!
//! Prints one line per frame that does not round-trip (`file:line: method: pointer: reason`),
//! then the summary line (see the library docs for the counters). Exit status: 0 when every
//! frame is lossless, 1 when some are not, 2 when the input is unusable (no such folder, no
//! transcript in it, a line that is not a JSON `{"dir", "raw"}` record). A `raw` frame that is
//! not JSON-RPC is a failure of that frame, not unusable input.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use msp_conformance::Runner;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir] = args.as_slice() else {
        eprintln!("usage: msp-conformance <DIR>");
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
