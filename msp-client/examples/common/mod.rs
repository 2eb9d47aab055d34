//! What the examples share: the host to run and the session to join.

use msp_rpc::HostCommand;

/// The host named by the arguments (a program and its arguments), else `muse serve`.
pub fn host() -> HostCommand {
    let mut args = std::env::args().skip(1);
    match args.next() {
        Some(program) => HostCommand::new(program).args(args),
        None => HostCommand::muse(),
    }
}

/// The session to join: `MSP_SESSION`, else `default`.
#[allow(dead_code)]
pub fn session(default: &str) -> String {
    std::env::var("MSP_SESSION").unwrap_or_else(|_| default.to_owned())
}
