//! The examples as a user runs them: each a child process, spawning the canned host on the
//! shared recording it was written for; what they print, checked.

mod support;

use std::path::PathBuf;
use std::process::Command;

/// Example `name` of this build (cargo builds the examples with the tests).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(|p| p.parent()).unwrap();
    profile
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Runs example `name` against the canned host playing `scenario` (with `allow`, places the
/// example legitimately chooses for itself); its stdout.
fn run(name: &str, scenario: &str, allow: &[&str], env: &[(&str, &str)]) -> Option<String> {
    let scenario = support::scenario(scenario)?;
    let output = Command::new(example(name))
        .arg(support::host_binary())
        .args(allow.iter().flat_map(|pattern| ["--allow", pattern]))
        .arg(&scenario)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{name} runs: {e}"));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{name}: {}\n{stdout}\n{stderr}",
        output.status
    );
    Some(stdout)
}

fn check_answer_question(stdout: &str) {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "asked: Database: Which database should the new service use? [Postgres | SQLite]"
    );
    assert!(
        lines[1].starts_with("settled: answered by this client (command "),
        "{stdout}"
    );
    assert_eq!(lines.len(), 2, "{stdout}");
}

/// The recipe resumes with the whole history where the recording's client excluded the items
/// (and paged them in after: the canned host lets the client leave that request out).
const RESUME_WITH_ITEMS: &str = "session/resume#/excludeItems";

#[test]
fn answer_question() {
    let allow = [RESUME_WITH_ITEMS];
    if let Some(stdout) = run(
        "answer_question",
        "userinput-answer-round-trip",
        &allow,
        &[],
    ) {
        check_answer_question(&stdout);
    }
}

/// The seed's own case: the question pending when the session is resumed from a snapshot.
#[test]
fn answer_question_pending_at_a_snapshot_resume() {
    let allow = ["session/resume#/history"];
    for name in ["answer_question", "answer_question_async"] {
        if cfg!(not(feature = "tokio")) && name.ends_with("async") {
            continue;
        }
        if let Some(stdout) = run(name, "snapshot-suffix-pending-userinput", &allow, &[]) {
            check_answer_question(&stdout);
        }
    }
}

#[cfg(feature = "tokio")]
#[test]
fn answer_question_async() {
    let allow = [RESUME_WITH_ITEMS];
    if let Some(stdout) = run(
        "answer_question_async",
        "userinput-answer-round-trip",
        &allow,
        &[],
    ) {
        check_answer_question(&stdout);
    }
}

#[test]
fn approve() {
    check_approve("approve");
}

#[cfg(feature = "tokio")]
#[test]
fn approve_async() {
    check_approve("approve_async");
}

fn check_approve(name: &str) {
    let env = [("MSP_CHOICE", "allow_session")];
    let Some(stdout) = run(name, "approval-round-trip", &[], &env) else {
        return;
    };
    assert_eq!(
        stdout,
        "approve? fileAccess: /home/me/src/proj/Cargo.toml (write)\n\
         decided: Allow for this session (terminal: true)\n\
         resolved: approvedForSession\n\
         turn: completed\n"
    );
}

#[cfg(feature = "tokio")]
#[test]
fn refuse_async() {
    let Some(stdout) = run("refuse_async", "approval-deny-round-trip", &[], &[]) else {
        return;
    };
    // The recording's client decided `abort` with this feedback: the host checked both.
    assert_eq!(
        stdout,
        "refused: fileAccess: /home/me/src/proj/Cargo.toml (write)\n\
         turn: completed\n"
    );
}

#[cfg(feature = "tokio")]
#[test]
fn allow_session_async() {
    let allow = ["session/resume#/history"];
    let Some(stdout) = run(
        "allow_session_async",
        "snapshot-suffix-pending-approval",
        &allow,
        &[],
    ) else {
        return;
    };
    // The approval pending at the resume, allowed for the session as recorded (the host
    // checked the choice), then the turn's end, then the handler's.
    assert_eq!(
        stdout,
        "allowed: fileAccess: /home/me/src/proj/Cargo.toml (write)\n\
         turn: completed\n\
         handler: ended with the connection\n"
    );
}

fn check_stream_turn(stdout: &str) {
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("userMessage completed: "), "{stdout}");
    assert!(
        lines.iter().any(|l| l.starts_with("agentMessage ")),
        "{stdout}"
    );
    assert_eq!(lines.last(), Some(&"turn: completed"), "{stdout}");
}

#[test]
fn stream_turn() {
    if let Some(stdout) = run("stream_turn", "text-run-single-turn", &[], &[]) {
        check_stream_turn(&stdout);
    }
}

#[cfg(feature = "tokio")]
#[test]
fn stream_turn_async() {
    if let Some(stdout) = run("stream_turn_async", "text-run-single-turn", &[], &[]) {
        check_stream_turn(&stdout);
    }
}

/// A gap among the events, refilled from `view/page` by the session: the item it missed
/// (event 7) is folded after the refill, before the events held meanwhile, and the watch
/// ends at the head the subscription named.
#[test]
fn watch_session() {
    // The recorded client paged with a member of a later schema, which this one does not send.
    let allow = ["view/page#/futureOptionalField"];
    let Some(stdout) = run("watch_session", "gap-recovery-splice-fill", &allow, &[]) else {
        return;
    };
    assert_eq!(
        stdout,
        "agentMessage completed: event 5\n\
         agentMessage completed: event 6\n\
         agentMessage completed: event 8\n\
         gap after v:0198f0aa-fixture-session:6: refilling\n\
         agentMessage completed: event 7\n\
         agentMessage completed: event 9\n\
         agentMessage completed: event 10\n\
         agentMessage completed: event 11\n\
         agentMessage completed: event 12\n\
         items: 8\n"
    );
}

/// The README's recipes are the examples' lines, in order (the README's compile as doc
/// tests; the examples run above).
#[test]
fn readme_recipes_are_the_examples() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    // Each block's shown lines, and how many of its hidden lines are task code too (the
    // inputs a program would get elsewhere: `# let session_id = ...`).
    let blocks: Vec<(Vec<&str>, usize)> = readme
        .split("```rust,no_run\n")
        .skip(1)
        .map(|block| {
            let block = block.split("```").next().unwrap();
            let lines = block.lines().map(str::trim);
            let shown = lines
                .clone()
                .filter(|line| !line.is_empty() && !line.starts_with('#'))
                .collect();
            (
                shown,
                lines.filter(|line| line.starts_with("# let ")).count(),
            )
        })
        .collect();
    let examples = [
        "answer_question",
        "answer_question_async",
        "approve",
        "approve_async",
        "refuse_async",
        "allow_session_async",
        "stream_turn",
        "stream_turn_async",
        "watch_session",
    ];
    assert_eq!(blocks.len(), examples.len(), "a recipe for each example");
    for ((block, hidden), name) in blocks.iter().zip(examples) {
        let source = std::fs::read_to_string(root.join(format!("examples/{name}.rs"))).unwrap();
        let mut lines = source.lines().map(str::trim);
        for line in block {
            assert!(
                lines.any(|l| l == *line),
                "{name}.rs lacks, in the README's order: {line}"
            );
        }
        let task = block.iter().filter(|l| !l.starts_with("use ")).count() + hidden;
        assert!(task <= 20, "{name}: {task} lines of task code");
    }
}

/// The workspace README shows this crate's recipes (answering a question, approving) as they
/// are here, where they compile as doc tests; and every Rust block it has is one of them.
#[test]
fn the_workspace_readme_shows_these_recipes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let ours = std::fs::read_to_string(root.join("README.md")).unwrap();
    let workspace = std::fs::read_to_string(root.join("../README.md")).unwrap();
    let blocks = |text: &str| -> Vec<String> {
        text.split("```rust,no_run\n")
            .skip(1)
            .map(|b| b.split("```").next().unwrap().to_owned())
            .collect()
    };
    let ours = blocks(&ours);
    let shown = blocks(&workspace);
    assert_eq!(
        shown,
        [ours[0].clone(), ours[2].clone()],
        "the question and the approvals"
    );
}

/// Every `cargo run -p msp-client --example` command the READMEs show, run as shown (its
/// environment, the host's arguments, the recording) against the canned host: what a reader
/// pastes works. The canned host fails the run when the client does other than the recording.
#[test]
fn the_readmes_run_commands_run_as_shown() {
    let Some(shared) = std::env::var_os("MSP_SHARED_DIR") else {
        eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
        return;
    };
    let shared = shared.to_string_lossy().into_owned();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut ran = Vec::new();
    for readme in ["../README.md", "README.md"] {
        let text = std::fs::read_to_string(root.join(readme)).unwrap();
        for command in commands(&text).filter(|c| c.contains("cargo run -p msp-client")) {
            let words = shell_words(&command.replace("$MSP_SHARED_DIR", &shared));
            let at = words.iter().position(|w| w == "cargo").unwrap();
            let (env, cargo) = words.split_at(at);
            let name = &cargo[cargo.iter().position(|w| w == "--example").unwrap() + 1];
            let args = &cargo[cargo.iter().position(|w| w == "--").unwrap() + 1..];
            let host = support::host_binary();
            let output = Command::new(example(name))
                .args(args.iter().map(|arg| match arg.as_str() {
                    "target/debug/msp-canned-host" => host.as_os_str(),
                    arg => std::ffi::OsStr::new(arg),
                }))
                .envs(env.iter().map(|w| w.split_once('=').unwrap()))
                .output()
                .unwrap_or_else(|e| panic!("{name} runs: {e}"));
            assert!(
                output.status.success(),
                "{readme}: `{command}`: {}\n{}\n{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            ran.push(name.clone());
        }
    }
    assert_eq!(ran, ["answer_question", "approve"], "the commands shown");
}

/// The shell commands in the fenced blocks of `text`, their continued lines joined.
fn commands(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut fenced = false;
    let mut joined = String::new();
    text.lines().filter_map(move |line| {
        if line.starts_with("```") {
            fenced = !fenced;
            return None;
        }
        if !fenced {
            return None;
        }
        let line = line.split(" # ").next().unwrap().trim();
        match line.strip_suffix('\\') {
            Some(head) => {
                joined.push_str(head);
                None
            }
            None => {
                joined.push_str(line);
                Some(std::mem::take(&mut joined))
            }
        }
    })
}

/// `command` split into words as a shell does, for the quoting the READMEs use (`'…'`,
/// `"…"`, no escapes).
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}
