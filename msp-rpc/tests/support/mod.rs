//! A host double for driver tests: the test thread plays the host over in-memory pipes, line
//! by line, so each test says exactly what the host sends and when.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};

use msp_rpc::blocking::Connection;
use msp_rpc::pipe::{pipe, PipeReader, PipeWriter};
use msp_rpc::{Inbound, Options};
use msp_types::ProtocolNotification;
use serde_json::Value;

/// The seed's re-issued question, as the host sent it.
pub const SEED_REQUEST: &str = r#"{"jsonrpc":"2.0","id":18,"method":"userInput/request","params":{"sessionId":"0198f0aa-1111-7000-8000-0000000000bb","userInputId":"0198f0ae-1111-7000-8000-0000000000f1","turnId":"018f6a1e-9b3c-7c21-a54a-2f30bd3c9f20","itemId":"0198f0ae-2222-7000-8000-0000000000f2","toolCallId":"call_ab31","toolName":"request_user_input","viewCursor":"v:0198f0aa-1111-7000-8000-0000000000bb:502","questions":[{"id":"db_choice","header":"Database","question":"Which database should the new service use?","selection":{"mode":"single"},"options":[{"label":"Postgres","description":"Matches the other services."},{"label":"SQLite","description":"Zero-ops, single node only."}]}],"autoResolutionMs":120000}}"#;

/// The seed's settlement.
pub const SEED_SETTLED: &str = r#"{"jsonrpc":"2.0","method":"userInput/settled","params":{"sessionId":"0198f0aa-1111-7000-8000-0000000000bb","viewCursor":"v:0198f0aa-1111-7000-8000-0000000000bb:503","sourceRange":{"stream":{"kind":"run","id":"018f6a1e-9b3c-7c21-a54a-2f30bd3c9f20"},"first":{"id":"018f9008-71aa-7000-8000-0000000000f3","sequence":142},"last":{"id":"018f9008-71aa-7000-8000-0000000000f3","sequence":142}},"userInputId":"0198f0ae-1111-7000-8000-0000000000f1","outcome":"answered","answers":[{"questionId":"db_choice","selectedLabel":"Postgres"}],"clarification":null,"reason":null,"decidedByCommandId":"018f6a2b-3333-7abc-8def-00000000d002"},"emittedAtMs":1754591000100}"#;

/// A `model/list` result.
pub const MODELS: &str = r#"{"models":[{"displayLabel":"Muse Large 2","isActive":false,"isDefault":true,"modelId":"muse-large-2","providerId":"muse"}],"providerId":"muse","source":"bundledCatalog"}"#;

/// An `initialize` result serving `fingerprint` and envelope `version`.
pub fn initialize_result(fingerprint: &str, version: i64) -> String {
    format!(
        r#"{{"experimentalApi":false,"grantedCapabilities":["sessionListStream"],"museHome":"/home/fixture/.muse","platformFamily":"unix","platformOs":"linux","schema":{{"fingerprint":"{fingerprint}","version":{version}}},"serverInfo":{{"name":"double","version":"0.0.0"}},"sessionDurability":"durable","userAgent":"double/0.0.0 (linux; x86_64)"}}"#
    )
}

/// The host's side of the pipes.
pub struct HostDouble {
    to_client: Option<PipeWriter>,
    from_client: BufReader<PipeReader>,
}

/// A client connection and the host double at its other end.
pub fn connect(options: Options<msp_rpc::Client>) -> (Connection, HostDouble) {
    connect_writing_through(options, |writer| writer)
}

/// The same, the client writing through `wrap` of its pipe.
pub fn connect_writing_through<W: Write + Send + 'static>(
    options: Options<msp_rpc::Client>,
    wrap: impl FnOnce(PipeWriter) -> W,
) -> (Connection, HostDouble) {
    let (client_reads, host_writes) = pipe();
    let (host_reads, client_writes) = pipe();
    let conn = Connection::new(client_reads, wrap(client_writes), options);
    let host = HostDouble {
        to_client: Some(host_writes),
        from_client: BufReader::new(host_reads),
    };
    (conn, host)
}

impl HostDouble {
    /// The next frame the client wrote; `None` once the client closed its side.
    pub fn recv(&mut self) -> Option<Value> {
        let mut line = String::new();
        match self.from_client.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                Some(serde_json::from_str(line.trim_end()).expect("the client writes JSON lines"))
            }
        }
    }

    /// Writes one line (a `\n` is added).
    pub fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    /// Writes raw bytes, as one write.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let writer = self.to_client.as_mut().expect("still open");
        writer.write_all(bytes).unwrap();
    }

    /// Answers the client frame `request` with `result` (JSON text).
    pub fn answer(&mut self, request: &Value, result: &str) {
        self.send(&result_line(request, result));
    }

    /// Closes the host's output: the client reads end of input.
    pub fn close_output(&mut self) {
        self.to_client = None;
    }
}

/// `count` notifications of a method in no table, numbered from 0, as one burst of lines.
pub fn numbered_notices(count: usize) -> String {
    (0..count)
        .map(|n| format!("{{\"jsonrpc\":\"2.0\",\"method\":\"future/notice\",\"params\":{{\"n\":{n},\"pad\":\"{:0>200}\"}}}}\n", n))
        .collect()
}

/// The number a `numbered_notices` notification carries.
pub fn notice_number(inbound: &Inbound) -> u64 {
    match inbound {
        Inbound::Notification {
            notification: ProtocolNotification::Unknown { params, .. },
            ..
        } => params.as_ref().unwrap()["n"].as_u64().unwrap(),
        other => panic!("not a numbered notice: {other:?}"),
    }
}

/// The line answering the client frame `request` with `result` (JSON text), without its `\n`.
pub fn result_line(request: &Value, result: &str) -> String {
    let id = &request["id"];
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}
