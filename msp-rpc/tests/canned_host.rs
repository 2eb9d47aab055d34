//! `msp-canned-host` as a child process: every shared transcript played to a client that
//! replays the transcript's own client lines with fresh ids and commandIds, and the diagnosis
//! a mismatching client gets.
#![cfg(feature = "canned-host")]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use msp_rpc::canned::{Dir, Transcript, INCOMPLETE, MISMATCH};
use msp_rpc::new_command_id;
use serde_json::Value;

const HOST: &str = env!("CARGO_BIN_EXE_msp-canned-host");
const WAIT: Duration = Duration::from_secs(20);

fn shared_transcripts() -> Option<PathBuf> {
    let dir = std::env::var_os("MSP_SHARED_DIR").filter(|v| !v.is_empty())?;
    let dir = PathBuf::from(dir).join("msp-upstream/transcripts");
    assert!(
        dir.is_dir(),
        "MSP_SHARED_DIR is set but {} is missing",
        dir.display()
    );
    Some(dir)
}

/// The canned host, its stdin, and its stdout line by line (with a deadline, never a hang).
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Host {
    fn spawn(args: &[&str]) -> Host {
        let mut child = Command::new(HOST)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Host {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\r\n").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&mut self, context: &str) -> Value {
        let line = self.lines.recv_timeout(WAIT).unwrap_or_else(|e| {
            panic!(
                "{context}: no frame from the host ({e}); stderr: {}",
                self.stderr_now()
            )
        });
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{context}: {e}: {line}"))
    }

    /// Closes stdin and waits: the exit code and stderr.
    fn finish(mut self) -> (i32, String) {
        self.stdin = None;
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (status.code().unwrap_or(-1), stderr)
    }

    fn stderr_now(&mut self) -> String {
        let _ = self.child.kill();
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        stderr
    }
}

/// Replays `transcript`'s client lines with fresh request ids and commandIds; checks every
/// server frame arrives as recorded, in the client's ids. The host's exit code and stderr.
fn replay(path: &Path, args: &[&str]) -> (i32, String) {
    let transcript = Transcript::load(path).unwrap();
    let mut host_args: Vec<&str> = args.to_vec();
    let shown = path.to_str().unwrap();
    host_args.push(shown);
    let mut host = Host::spawn(&host_args);
    let mut ids: HashMap<Value, Value> = HashMap::new();
    let mut commands: HashMap<String, String> = HashMap::new();
    for frame in &transcript.frames {
        let context = format!("{}:{}", transcript.origin, frame.line);
        let mut value = frame.value.clone();
        match frame.dir {
            Dir::Client => {
                if value.get("method").is_some() {
                    if let Some(id) = value.get("id").cloned() {
                        let fresh = match &id {
                            Value::Number(n) => Value::from(n.as_i64().unwrap() + 1000),
                            other => Value::from(format!("fresh-{}", other.as_str().unwrap())),
                        };
                        ids.insert(id, fresh.clone());
                        value["id"] = fresh;
                    }
                }
                if let Some(Value::String(recorded)) = value.pointer("/params/commandId").cloned() {
                    let fresh = commands
                        .entry(recorded)
                        .or_insert_with(new_command_id)
                        .clone();
                    value["params"]["commandId"] = Value::String(fresh);
                }
                host.send(&value.to_string());
            }
            Dir::Server => {
                if value.get("method").is_none() {
                    if let Some(fresh) = value.get("id").and_then(|id| ids.get(id)).cloned() {
                        value["id"] = fresh;
                    }
                }
                rewrite(&mut value, &commands);
                let got = host.recv(&context);
                assert_eq!(got, value, "{context}: the host's frame");
            }
        }
    }
    host.finish()
}

fn rewrite(value: &mut Value, map: &HashMap<String, String>) {
    match value {
        Value::String(s) => {
            if let Some(fresh) = map.get(s.as_str()) {
                *s = fresh.clone();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, map)),
        Value::Object(members) => members.values_mut().for_each(|v| rewrite(v, map)),
        _ => {}
    }
}

#[test]
fn every_shared_scenario_completes_for_a_client_replaying_its_own_lines() {
    let Some(dir) = shared_transcripts() else {
        eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
        return;
    };
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("transcript.ndjson").is_file())
        .collect();
    scenarios.sort();
    assert_eq!(scenarios.len(), 47, "the shared corpus has 47 scenarios");
    for scenario in &scenarios {
        for mode in [&[][..], &["--strict"][..]] {
            let (code, stderr) = replay(scenario, mode);
            assert_eq!(code, 0, "{} {mode:?}: {stderr}", scenario.display());
            assert!(
                !stderr.contains("note:"),
                "{}: {stderr}",
                scenario.display()
            );
        }
    }
}

#[test]
fn the_project_fixture_of_the_seed_completes() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/seed-answer-user-input");
    let (code, stderr) = replay(&fixture, &[]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_mismatching_client_is_told_which_frame_at_which_line_differs_where() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/seed-answer-user-input");
    let mut host = Host::spawn(&["--strict", fixture.to_str().unwrap()]);
    host.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"x","version":"1"}}}"#);
    host.recv("initialize");
    // The recording has `initialized` next; send a request with a wrong params shape instead.
    host.send(r#"{"jsonrpc":"2.0","method":"initialized","params":{"unexpected":true}}"#);
    let (code, stderr) = host.finish();
    assert_eq!(code, MISMATCH, "{stderr}");
    let origin = fixture.join("transcript.ndjson").display().to_string();
    assert!(
        stderr.contains(&format!(
            "mismatch at {origin}:3: expected the client's notification initialized"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"at (the frame): member "params" was not recorded"#),
        "{stderr}"
    );
}

#[test]
fn a_client_that_stops_early_is_told_what_the_transcript_expected() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/seed-answer-user-input");
    let host = Host::spawn(&[fixture.to_str().unwrap()]);
    let (code, stderr) = host.finish();
    assert_eq!(code, INCOMPLETE, "{stderr}");
    assert!(
        stderr.contains(":1 expects it to send request initialize (id 1)"),
        "{stderr}"
    );
}
