//! The canned host for the client's tests: as a child process (`msp-canned-host`, built
//! when missing) over real pipes, or in this process over in-memory pipes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::thread::{self, JoinHandle};

use msp_client::blocking::Client;
use msp_client::Options;
use msp_rpc::canned::{CannedHost, Outcome, Transcript};
use msp_rpc::pipe::pipe;
use msp_rpc::HostCommand;

/// The shared transcripts, when `MSP_SHARED_DIR` names the shared material.
pub fn transcripts() -> Option<PathBuf> {
    let dir = std::env::var_os("MSP_SHARED_DIR").filter(|v| !v.is_empty())?;
    let dir = PathBuf::from(dir).join("msp-upstream/transcripts");
    assert!(
        dir.is_dir(),
        "MSP_SHARED_DIR is set but {} is missing",
        dir.display()
    );
    Some(dir)
}

/// Scenario `name` of the shared transcripts; `None` (the test skips) without them.
pub fn scenario(name: &str) -> Option<PathBuf> {
    match transcripts() {
        Some(dir) => Some(dir.join(name)),
        None => {
            eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
            None
        }
    }
}

/// The `msp-canned-host` binary of this build, built once if it is missing.
pub fn host_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        // target/<profile>/deps/<this test> -> target/<profile>/msp-canned-host
        let exe = std::env::current_exe().expect("the test's path");
        let profile = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>");
        let binary = profile.join(format!("msp-canned-host{}", std::env::consts::EXE_SUFFIX));
        if !binary.exists() {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut build = Command::new(cargo);
            build.args([
                "build",
                "-p",
                "msp-rpc",
                "--features",
                "canned-host",
                "--bin",
                "msp-canned-host",
            ]);
            if profile.file_name().is_some_and(|n| n == "release") {
                build.arg("--release");
            }
            let status = build.status().expect("cargo runs");
            assert!(status.success(), "building msp-canned-host failed");
        }
        binary
    })
}

/// The options every test client uses.
pub fn options() -> Options {
    Options::new("conformance", "0.0.0")
}

/// A client of the canned host playing `scenario`, spawned as a child process.
pub fn spawn(scenario: &Path, args: &[&str]) -> Client {
    let command = HostCommand::new(host_binary()).args(args).arg(scenario);
    Client::spawn(&command, options()).expect("the canned host starts and shakes hands")
}

/// A client of the canned host playing `scenario` in this process, over in-memory pipes;
/// the host's thread gives its outcome and its stderr.
pub fn in_memory(scenario: &Path) -> (Client, JoinHandle<(Outcome, String)>) {
    let transcript = Transcript::load(scenario).expect("the transcript loads");
    let (client_reader, host_writer) = pipe();
    let (host_reader, client_writer) = pipe();
    let host = thread::spawn(move || {
        let mut stderr = Vec::new();
        let outcome = CannedHost::new(transcript)
            .serve(host_reader, host_writer, &mut stderr)
            .outcome;
        (outcome, String::from_utf8_lossy(&stderr).into_owned())
    });
    let client = Client::over(client_reader, client_writer, options()).expect("handshake");
    (client, host)
}

/// Shared scenario `name` edited at run time (frames as JSON, in order, each `(client,
/// frame)`), written with its manifest to a temporary folder; `None` without the shared
/// material.
pub fn derived(
    name: &str,
    edit: impl FnOnce(&mut Vec<(bool, serde_json::Value)>),
) -> Option<tempfile::TempDir> {
    let source = scenario(name)?;
    let mut frames: Vec<(bool, serde_json::Value)> =
        std::fs::read_to_string(source.join("transcript.ndjson"))
            .unwrap()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                let line: serde_json::Value = serde_json::from_str(line).unwrap();
                let raw = line["raw"].as_str().unwrap();
                (line["dir"] == "client", serde_json::from_str(raw).unwrap())
            })
            .collect();
    edit(&mut frames);
    let dir = tempfile::tempdir().unwrap();
    let text: String = frames
        .iter()
        .map(|(client, frame)| {
            let dir = if *client { "client" } else { "server" };
            format!(
                "{}\n",
                serde_json::json!({"dir": dir, "raw": frame.to_string()})
            )
        })
        .collect();
    std::fs::write(dir.path().join("transcript.ndjson"), text).unwrap();
    std::fs::copy(
        source.join("manifest.json"),
        dir.path().join("manifest.json"),
    )
    .unwrap();
    Some(dir)
}
