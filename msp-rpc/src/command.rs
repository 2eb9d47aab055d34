//! Command ids: minted once per command, kept across retries.
//!
//! Commands (`session/resume`, `turn/start`, `userInput/answer`, ...) carry a client-minted
//! `commandId` so that the host applies each command once. A timed-out command has an
//! unknown outcome, not a failed one: send it again with the same `commandId`, never a fresh
//! one, and the host answers the retry with the first attempt's outcome.

use std::marker::PhantomData;

use msp_types::rpc::Request;

/// A fresh `commandId`: a UUIDv7 (time-ordered), the form hosts mint and expect.
pub fn new_command_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// A command's params with the `commandId` minted for it, to send and, after a timeout, to
/// send again unchanged.
///
/// ```
/// use msp_rpc::Command;
/// use msp_types::protocol::methods;
/// use msp_types::UserInputCancelParams;
///
/// let cancel = Command::<methods::UserInputCancel>::new(|command_id| {
///     UserInputCancelParams::builder().command_id(command_id).session_id("sess-1").user_input_id("q-1").build()
/// });
/// assert_eq!(cancel.params().command_id, cancel.command_id());
/// ```
#[derive(Debug)]
pub struct Command<M: Request> {
    params: M::Params,
    command_id: String,
    method: PhantomData<fn() -> M>,
}

impl<M: Request> Command<M> {
    /// Mints a `commandId` and builds the params around it.
    pub fn new(build: impl FnOnce(String) -> M::Params) -> Self {
        let command_id = new_command_id();
        Command {
            params: build(command_id.clone()),
            command_id,
            method: PhantomData,
        }
    }

    /// A command whose `commandId` was minted before (kept across a restart, say): sent again,
    /// the host answers with the first send's outcome.
    pub fn with_id(command_id: impl Into<String>, build: impl FnOnce(String) -> M::Params) -> Self {
        let command_id = command_id.into();
        Command {
            params: build(command_id.clone()),
            command_id,
            method: PhantomData,
        }
    }

    /// The `commandId` every send of this command carries.
    pub fn command_id(&self) -> &str {
        &self.command_id
    }

    /// The params, as sent each time.
    pub fn params(&self) -> &M::Params {
        &self.params
    }
}

impl<M: Request> Clone for Command<M>
where
    M::Params: Clone,
{
    fn clone(&self) -> Self {
        Command {
            params: self.params.clone(),
            command_id: self.command_id.clone(),
            method: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_ids_are_uuid_v7_and_fresh() {
        let a = new_command_id();
        let b = new_command_id();
        assert_ne!(a, b);
        let parsed = uuid::Uuid::parse_str(&a).unwrap();
        assert_eq!(parsed.get_version_num(), 7);
        assert!(a < b, "ordered by creation: {a} {b}");
    }
}
