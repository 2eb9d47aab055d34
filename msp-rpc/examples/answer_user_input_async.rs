//! The seed's recipe on the tokio driver, in short: resume a session someone else started,
//! take the re-issued question, answer it with an offered label, wait for the settlement.
//!
//! ```text
//! cargo run -p msp-rpc --features tokio --example answer_user_input_async -- [TRANSCRIPT_DIR SESSION_ID]
//! ```
//! The host is `msp-canned-host` (next to this program, or `$MSP_CANNED_HOST`) playing the
//! project's fixture of the seed's exchange by default.

use std::path::{Path, PathBuf};
use std::time::Duration;

use msp_rpc::tokio::Connection;
use msp_rpc::{Command, HostCommand, Inbound, Options, Reply};
use msp_types::protocol::methods;
use msp_types::{
    ClientInfo, InitializeParams, ProtocolNotification, RequestReceipt, ServerRequest,
    SessionResumeParams, UserInputAnswer, UserInputAnswerParams,
};

type Error = Box<dyn std::error::Error>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (transcript, session) = match &args[..] {
        [dir, session] => (PathBuf::from(dir), session.clone()),
        _ => (fixture(), "0198f0aa-1111-7000-8000-0000000000bb".to_owned()),
    };
    // One handler for the host's requests: the question goes to the main task, the host gets
    // the `{}` receipt; anything else is refused, never left unanswered.
    let (tx, mut asked) = tokio::sync::mpsc::unbounded_channel();
    let options = Options::new().on_request(move |_, request| match request {
        ServerRequest::UserInputRequest(params) => {
            let _ = tx.send(params);
            Reply::ok(&RequestReceipt::new())
        }
        other => Reply::method_not_found(other.method()),
    });
    let conn = Connection::spawn(&HostCommand::new(canned_host()?).arg(transcript), options)?;
    let info = ClientInfo::builder()
        .name("answer_user_input_async")
        .version("0.1.0")
        .build();
    let hello = conn
        .initialize(&InitializeParams::builder().client_info(info).build())
        .await?;
    let host = hello
        .server_info()
        .map_or_else(|| "a host".into(), |info| info.name);
    println!("connected to {host}");

    let resume = Command::<methods::SessionResume>::new(|command_id| {
        let mut params = SessionResumeParams::builder()
            .command_id(command_id)
            .session_id(session.clone())
            .build();
        params.exclude_items = Some(true);
        params
    });
    let resumed = conn.command(&resume).await?;
    let pending: Vec<_> = resumed
        .pending_requests
        .iter()
        .filter_map(|p| p.user_input_id.clone())
        .collect();
    let question = tokio::time::timeout(Duration::from_secs(20), asked.recv())
        .await?
        .ok_or("the host asked nothing")?;
    let id = question.user_input_id.clone();
    println!(
        "question {id} (pending at resume: {})",
        pending.contains(&id)
    );

    // Only a label the agent offered: the first option of each question.
    let answers: Vec<UserInputAnswer> = question
        .questions
        .iter()
        .filter_map(|q| {
            let mut answer = UserInputAnswer::builder().question_id(q.id.clone()).build();
            answer.selected_label = Some(q.options.first()?.label.clone());
            Some(answer)
        })
        .collect();
    let answer = Command::<methods::UserInputAnswerMethod>::new(|command_id| {
        UserInputAnswerParams::builder()
            .answers(answers)
            .command_id(command_id)
            .session_id(session.clone())
            .user_input_id(id.clone())
            .build()
    });
    let ack = conn.command(&answer).await?;
    println!("host: {} (a receipt, not the outcome)", ack.status);

    let mut notifications = conn.notifications().await;
    while let Some(inbound) = notifications.next().await {
        if let Inbound::Notification {
            notification: ProtocolNotification::UserInputSettled(settled),
            ..
        } = inbound
        {
            let mine = settled.decided_by_command_id.as_deref() == Some(answer.command_id());
            println!("settled: {} (by this client: {mine})", settled.outcome);
            break;
        }
    }
    drop(notifications);
    if let Some(exit) = conn.close().await {
        println!("{exit}");
    }
    Ok(())
}

fn fixture() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new(".."));
    workspace.join("tests/fixtures/seed-answer-user-input")
}

/// `$MSP_CANNED_HOST`, else `msp-canned-host` beside this program's folder.
fn canned_host() -> Result<PathBuf, Error> {
    if let Some(path) = std::env::var_os("MSP_CANNED_HOST") {
        return Ok(path.into());
    }
    let exe = std::env::current_exe()?;
    let beside = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("msp-canned-host"));
    beside.filter(|path| path.is_file()).ok_or_else(|| {
        "build msp-canned-host first: cargo build -p msp-rpc --features canned-host".into()
    })
}
