//! `msp-canned-host`: plays the server side of a recorded MSP transcript over stdio, for
//! testing clients. See `msp_rpc::canned` for how client frames are matched.

use std::path::PathBuf;
use std::process::ExitCode;

use msp_rpc::canned::{Allow, CannedHost, Script, Transcript, DEFAULT_ALLOWED, UNUSABLE};

const USAGE: &str = "\
Usage: msp-canned-host [OPTIONS] TRANSCRIPT_DIR_OR_FILE

Plays the server side of a transcript (`{\"dir\", \"raw\"}` lines; a scenario folder holds
transcript.ndjson and manifest.json) on stdin and stdout, as `muse serve` would.

Client frames must carry the recorded values, except ids and commandIds (bound to the
client's), the manifest's normalize paths, and the places loosened by METHOD#POINTER
patterns (a pointer into the params; `*` for any method or any one segment).

Options:
  --allow PATTERN       let the client's value there differ, or be left out (repeatable),
                        such as session/start#/workspaceRoot or approval/decide#/feedback
  --no-default-allow    compare even what the default set loosens (printed below)
  --script FILE         faults to put between transcript steps (see below)
  --fault STEP          one script step, such as `after 5: exit 3` (repeatable)
  --fingerprint VALUE   serve VALUE as schema.fingerprint in the initialize result
  --strict              the client must send every recorded client frame, and no member
                        the recording lacks
  --trace               write every frame received (< ) and sent (> ) to stderr
  -h, --help            print this help

Script steps, one a line: `start|end|after N: stderr TEXT | exit CODE | stall | close-stdout
| send LINE | fingerprint VALUE | allow PATTERN`, N being a transcript line.

Exit codes: 0 the transcript was played and the client closed its output; 65 a client frame
did not match (diagnosis on stderr); 66 the client's input ended before the transcript did;
2 bad usage or an unreadable transcript or script; a scripted `exit CODE` exits with CODE.";

struct Args {
    transcript: PathBuf,
    allowed: Vec<Allow>,
    no_default_allow: bool,
    script: Script,
    fingerprint: Option<String>,
    strict: bool,
    trace: bool,
}

fn parse(args: &[String]) -> Result<Option<Args>, String> {
    let mut transcript = None;
    let mut script = Script::new();
    let (mut fingerprint, mut strict, mut trace) = (None, false, false);
    let (mut allowed, mut no_default_allow) = (Vec::new(), false);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().cloned().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--strict" => strict = true,
            "--trace" => trace = true,
            "--no-default-allow" => no_default_allow = true,
            "--allow" => allowed.push(Allow::parse(&value("--allow")?)?),
            "--fingerprint" => fingerprint = Some(value("--fingerprint")?),
            "--script" => {
                let path = value("--script")?;
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
                script.extend(Script::parse(&text).map_err(|e| format!("{path}: {e}"))?);
            }
            "--fault" => {
                let step = value("--fault")?;
                script.extend(
                    Script::parse(&step).map_err(|e| format!("--fault {step:?}: {}", e.message))?,
                );
            }
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            path if transcript.is_none() => transcript = Some(PathBuf::from(path)),
            extra => return Err(format!("unexpected argument {extra}")),
        }
    }
    let transcript = transcript.ok_or("a transcript folder or file is needed")?;
    Ok(Some(Args {
        transcript,
        allowed,
        no_default_allow,
        script,
        fingerprint,
        strict,
        trace,
    }))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse(&args) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}\n\nLoosened by default:");
            for pattern in DEFAULT_ALLOWED {
                println!("  {pattern}");
            }
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("msp-canned-host: {message}\n\n{USAGE}");
            return code(UNUSABLE);
        }
    };
    let transcript = match Transcript::load(&args.transcript) {
        Ok(transcript) => transcript,
        Err(error) => {
            eprintln!("msp-canned-host: {error}");
            return code(UNUSABLE);
        }
    };
    let mut host = CannedHost::new(transcript)
        .script(args.script)
        .strict(args.strict)
        .trace(args.trace);
    if args.no_default_allow {
        host = host.no_default_allowed();
    }
    for allow in args.allowed {
        host = host.allow(allow);
    }
    if let Some(fingerprint) = args.fingerprint {
        host = host.fingerprint(fingerprint);
    }
    if let Err(message) = host.check_script() {
        eprintln!("msp-canned-host: {message}");
        return code(UNUSABLE);
    }
    let report = host.serve(std::io::stdin().lock(), stdout(), std::io::stderr().lock());
    code(report.outcome.exit_code())
}

/// Stdout as a file this process owns, so that a scripted `close-stdout` really closes it
/// (dropping `std::io::Stdout` would leave the descriptor open).
#[cfg(unix)]
fn stdout() -> std::fs::File {
    use std::os::fd::FromRawFd;
    // SAFETY: descriptor 1 is this process's stdout, open for its whole life; from here on
    // nothing else writes to it (no `print!` below), so the file is its only owner.
    unsafe { std::fs::File::from_raw_fd(1) }
}

#[cfg(not(unix))]
fn stdout() -> std::io::Stdout {
    std::io::stdout()
}

fn code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
