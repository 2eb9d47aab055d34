//! Many threads on one connection, closed at a random moment: no response goes to the wrong
//! caller, no notification is lost, doubled or reordered, and no call waits past its deadline.
//! Each round is seeded (printed on failure), so a failing interleaving's inputs can be run
//! again.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use msp_rpc::blocking::Connection;
use msp_rpc::pipe::pipe;
use msp_rpc::{Options, RpcError};
use msp_types::protocol::methods;
use msp_types::UserInputAnswerParams;
use support::notice_number;

const CALLERS: usize = 6;
const CALLS: usize = 40;
const TIMEOUT: Duration = Duration::from_millis(300);
/// How late past its deadline a call may return: the machine may be busy; a call that waited
/// for a response that never comes, or for a lock held across a blocked write, would take
/// forever.
const SLACK: Duration = Duration::from_secs(5);

/// A small deterministic generator (xorshift), so that each round can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn params(caller: usize, call: usize) -> UserInputAnswerParams {
    UserInputAnswerParams::builder()
        .answers(vec![])
        .command_id(format!("cmd-{caller}-{call}"))
        .session_id("sess")
        .user_input_id(format!("q-{caller}-{call}"))
        .build()
}

/// A host that answers every request (some late, some never) and sends numbered notices
/// between, until the client closes its side or `stop` is set.
fn host(seed: u64, stop: Arc<AtomicBool>) -> (Connection, std::thread::JoinHandle<u64>) {
    let (client_reads, mut host_writes) = pipe();
    let (host_reads, client_writes) = pipe();
    let conn = Connection::new(client_reads, client_writes, Options::new());
    let host = std::thread::spawn(move || {
        let mut rng = Rng(seed);
        let mut reads = BufReader::new(host_reads);
        let mut line = String::new();
        let mut notices = 0u64;
        let mut held = Vec::new();
        while reads.read_line(&mut line).is_ok_and(|n| n > 0) && !stop.load(Ordering::Relaxed) {
            let frame: serde_json::Value = serde_json::from_str(line.trim_end()).unwrap();
            line.clear();
            let mut out = String::new();
            for _ in 0..rng.below(4) {
                out.push_str(&format!(
                    "{{\"jsonrpc\":\"2.0\",\"method\":\"future/notice\",\"params\":{{\"n\":{notices}}}}}\n"
                ));
                notices += 1;
            }
            let Some(id) = frame.get("id") else { continue };
            let echoed = &frame["params"]["userInputId"];
            let answer = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"commandId\":\"c\",\"status\":\"accepted\",\"userInputId\":{echoed}}}}}\n"
            );
            match rng.below(10) {
                0 => {}                     // never answered: its caller times out
                1 | 2 => held.push(answer), // answered later, out of order
                _ => out.push_str(&answer),
            }
            if rng.below(3) == 0 {
                out.extend(held.drain(..).rev());
            }
            if host_writes.write_all(out.as_bytes()).is_err() {
                break;
            }
        }
        notices
    });
    (conn, host)
}

fn round(seed: u64) {
    let mut rng = Rng(seed);
    let stop = Arc::new(AtomicBool::new(false));
    let (conn, host) = host(seed ^ 0x9e37_79b9_7f4a_7c15, stop.clone());
    let consumer = std::thread::spawn({
        let conn = conn.clone();
        move || {
            let mut next = 0;
            for inbound in conn.notifications() {
                assert_eq!(
                    notice_number(&inbound),
                    next,
                    "seed {seed}: lost, doubled or reordered"
                );
                next += 1;
            }
            next
        }
    });
    let callers: Vec<_> = (0..CALLERS)
        .map(|caller| {
            let conn = conn.clone();
            std::thread::spawn(move || {
                let mut outcomes = [0usize; 3];
                for call in 0..CALLS {
                    let started = Instant::now();
                    let result = conn.request_with_timeout::<methods::UserInputAnswerMethod>(
                        &params(caller, call),
                        TIMEOUT,
                    );
                    assert!(
                        started.elapsed() < TIMEOUT + SLACK,
                        "seed {seed}: a call waited {:?}",
                        started.elapsed()
                    );
                    match result {
                        Ok(answer) => {
                            let expected = format!("q-{caller}-{call}");
                            assert_eq!(
                                answer.user_input_id, expected,
                                "seed {seed}: another's response"
                            );
                            outcomes[0] += 1;
                        }
                        Err(RpcError::TimedOut { .. }) => outcomes[1] += 1,
                        Err(RpcError::Closed(_)) => outcomes[2] += 1,
                        Err(other) => panic!("seed {seed}: {other}"),
                    }
                }
                outcomes
            })
        })
        .collect();
    // Closed at a random moment: while calls are in flight, or after them.
    std::thread::sleep(Duration::from_millis(rng.below(400)));
    conn.close();
    let mut outcomes = [0usize; 3];
    for caller in callers {
        for (sum, n) in outcomes.iter_mut().zip(caller.join().unwrap()) {
            *sum += n;
        }
    }
    assert_eq!(outcomes.iter().sum::<usize>(), CALLERS * CALLS);
    let taken = consumer.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    drop(conn);
    let sent = host.join().unwrap();
    assert!(
        taken <= sent,
        "seed {seed}: {taken} notices taken, {sent} sent"
    );
}

#[test]
fn many_callers_a_consumer_and_a_random_close_lose_nothing_and_wait_no_longer_than_their_deadline()
{
    let base = std::env::var("MSP_STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_u64);
    for n in 0..8 {
        round(base.wrapping_add(n * 7919) | 1);
    }
}
