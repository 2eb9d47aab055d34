//! The core's synchronization under every interleaving of small scenarios (loom). Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p msp-client --lib --release loom`.
//!
//! Threads play the pump (routing what the connection delivered, the host's requests among
//! its notifications, and ending the connection), an opener and a handle (waiting on an
//! event or a turn's end, as the drivers do: polling a core step with a waker). A lost
//! wake-up shows as a deadlock, a lost or doubled event as a failed assertion. Where a
//! request's copy lands among the notifications is msp-rpc's, checked by its own models.

use std::future::poll_fn;
use std::sync::Arc;

use loom::future::block_on;
use loom::thread;
use msp_rpc::CloseReason;
use msp_session::{FoldRules, Input, TurnState};
use msp_types::{Frame, Message, Sender};

use super::{Core, Event, HandleWait, Paging, Routed, Slot};
use crate::pump::{self, Pumped, Source};
use crate::stop::HandlerStop;

const SESSION: &str = "s";

fn notification(line: &str) -> Input {
    match Frame::parse(Sender::Server, line).unwrap().message {
        Message::Notification(n) => Input::Notification(n),
        Message::ServerRequest { request, .. } => Input::Request(request),
        other => panic!("{other:?}"),
    }
}

fn started_frame(n: usize) -> Input {
    notification(&format!(
        r#"{{"jsonrpc":"2.0","method":"item/started","params":{{"sessionId":"s","viewCursor":"v:{n}","item":{{"itemId":"i{n}","kind":"agentMessage","revision":1,"status":"inProgress","turnId":"t"}}}}}}"#
    ))
}

fn turn_completed_frame() -> Input {
    notification(
        r#"{"jsonrpc":"2.0","method":"turn/completed","params":{"sessionId":"s","turnId":"t","terminal":"completed","viewCursor":"v:9","sourceRange":{"stream":{"kind":"run","id":"t"},"first":{"id":"r","sequence":1},"last":{"id":"r","sequence":1}}}}"#,
    )
}

fn question_frame() -> Input {
    notification(
        r#"{"jsonrpc":"2.0","id":7,"method":"userInput/request","params":{"sessionId":"s","userInputId":"q","turnId":"t","itemId":"i","toolCallId":"c","toolName":"request_user_input","viewCursor":"v:5","questions":[]}}"#,
    )
}

/// Runs `scenario` under every interleaving with up to `LOOM_MAX_PREEMPTIONS` (default 3)
/// preemptions, as msp-rpc's checks do. The fold runs on spawned threads only (their stacks
/// are set; the model's own is small).
fn model(scenario: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(scenario);
}

/// A thread of the model, with a stack deep enough for the fold (loom's default is small).
fn spawn<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> thread::JoinHandle<T> {
    thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(work)
        .unwrap()
}

/// The inputs, decoded once outside the models (the decoder's stack is deep).
struct Inputs {
    started: Vec<Input>,
    turn_completed: Input,
    question: Input,
    gap: Input,
}

static INPUTS: std::sync::LazyLock<Inputs> = std::sync::LazyLock::new(|| Inputs {
    started: (0..3).map(started_frame).collect(),
    turn_completed: turn_completed_frame(),
    question: question_frame(),
    gap: notification(
        r#"{"jsonrpc":"2.0","method":"view/gap","params":{"sessionId":"s","after":"v:1","next":"v:3"}}"#,
    ),
});

fn started(n: usize) -> Input {
    INPUTS.started[n].clone()
}

fn turn_completed() -> Input {
    INPUTS.turn_completed.clone()
}

fn question() -> Input {
    INPUTS.question.clone()
}

fn core() -> Arc<Core> {
    let core = Arc::new(Core::new(FoldRules::default(), 16));
    assert!(core.open(SESSION, |_| ()).refills.is_empty());
    core
}

/// The pump routing `input` on a thread of its own.
fn routing(core: &Arc<Core>, input: Input) -> thread::JoinHandle<()> {
    let core = core.clone();
    spawn(move || {
        let _ = core.route(input);
    })
}

fn next_event(core: &Core) -> Option<Event> {
    let mut wait = core.slot_wait(core.place_of(SESSION));
    block_on(poll_fn(|cx| wait.poll(cx, Slot::next_event)))
}

#[test]
fn loom_an_event_routed_while_a_handle_waits_reaches_it() {
    model(|| {
        let core = core();
        let pump = routing(&core, started(1));
        assert!(matches!(next_event(&core), Some(Event::Folded { .. })));
        pump.join().unwrap();
    });
}

#[test]
fn loom_a_wait_given_up_while_an_input_is_routed_takes_nothing_of_its_tasks_other_wait() {
    model(|| {
        let core = core();
        let pump = routing(&core, started(1));
        let place = core.place_of(SESSION);
        let arrived =
            |slot: &mut Slot, _: Option<&CloseReason>| (slot.fold.arrivals() > 0).then_some(());
        // One task, one waker, two waits: the first polled once and given up, the second
        // woken by the input all the same.
        let mut given_up = Some(core.slot_wait(place));
        let mut kept = core.slot_wait(place);
        block_on(poll_fn(|cx| {
            if let Some(mut wait) = given_up.take() {
                let _ = wait.poll(cx, arrived);
            }
            kept.poll(cx, arrived)
        }));
        drop(kept);
        pump.join().unwrap();
        assert_eq!(core.lock().slots.at(place).waiting.wakers.len(), 0);
    });
}

#[test]
fn loom_a_turn_waited_on_ends_by_its_event_or_by_the_close() {
    model(|| {
        let core = core();
        let pump = {
            let core = core.clone();
            spawn(move || {
                let _ = core.route(started(1));
                let _ = core.route(turn_completed());
                core.end(CloseReason::PeerClosed, true);
            })
        };
        let mut wait = core.slot_wait(core.place_of(SESSION));
        let ended = block_on(poll_fn(|cx| {
            wait.poll(cx, |slot, ended| {
                slot.check_fold(ended, |fold, _| {
                    fold.turn("t")
                        .filter(|t| t.state().is_over())
                        .map(|t| t.state())
                })
            })
        }));
        // Whichever comes first, the wait ends; the turn's event comes before the close.
        assert_eq!(ended.ok(), Some(TurnState::Ended));
        pump.join().unwrap();
    });
}

#[test]
fn loom_a_stop_ends_a_handlers_wait_whenever_it_comes() {
    model(|| {
        let core = core();
        let stop = HandlerStop::new();
        let stopping = {
            let stop = stop.clone();
            spawn(move || stop.stop())
        };
        // A handler's wait, as `Deciding` makes it: it watches the stop, then checks it
        // in the slot; stopped before, during or after its first check, it ends.
        stop.watch(&core, SESSION);
        let mut wait = core.slot_wait(core.place_of(SESSION));
        block_on(poll_fn(|cx| {
            wait.poll(cx, |_, _| stop.is_stopped().then_some(()))
        }));
        stopping.join().unwrap();
    });
}

#[test]
fn loom_the_close_ends_a_wait_for_events() {
    model(|| {
        let core = core();
        let pump = {
            let core = core.clone();
            spawn(move || core.end(CloseReason::PeerClosed, true))
        };
        assert!(matches!(next_event(&core), Some(Event::Closed { .. })));
        assert!(next_event(&core).is_none());
        pump.join().unwrap();
    });
}

#[test]
fn loom_the_close_ends_a_wait_for_the_connections_end() {
    model(|| {
        let core = core();
        let pump = {
            let core = core.clone();
            spawn(move || core.end(CloseReason::PeerClosed, true))
        };
        let mut ended = core.end_wait();
        let reason = block_on(poll_fn(|cx| ended.poll(cx)));
        assert!(matches!(reason, CloseReason::PeerClosed));
        pump.join().unwrap();
    });
}

#[test]
fn loom_what_the_host_said_before_a_session_opened_is_folded_once_it_opens() {
    model(|| {
        let core = Arc::new(Core::new(FoldRules::default(), 16));
        let pump = {
            let core = core.clone();
            spawn(move || {
                let _ = core.route(started(1));
            })
        };
        let opener = {
            let core = core.clone();
            spawn(move || core.open(SESSION, |_| ()))
        };
        pump.join().unwrap();
        // No gap was routed, so opening starts no refill.
        assert!(opener.join().unwrap().refills.is_empty());
        core.read(SESSION, |fold| assert_eq!(fold.items().len(), 1));
        assert!(matches!(next_event(&core), Some(Event::Folded { .. })));
    });
}

/// The connection, as the pump and a waiting handle see it (`pump.rs`'s [`Source`]).
#[derive(Default)]
struct Wire {
    frames: std::collections::VecDeque<Input>,
    closed: bool,
    waiting: Vec<std::task::Waker>,
}

#[derive(Default)]
struct FakeSource(loom::sync::Mutex<Wire>);

impl FakeSource {
    /// A connection, and a reader thread that hands it item `n` for each of `items`, then
    /// its end.
    fn reading(items: &[usize]) -> (Arc<FakeSource>, thread::JoinHandle<()>) {
        FakeSource::delivering(items.iter().map(|&n| started(n)).collect())
    }

    /// A connection, and a reader thread that hands it `inputs`, then its end.
    fn delivering(inputs: Vec<Input>) -> (Arc<FakeSource>, thread::JoinHandle<()>) {
        let source = Arc::new(FakeSource::default());
        let reader = {
            let source = source.clone();
            spawn(move || {
                inputs
                    .into_iter()
                    .for_each(|input| source.send(Some(input)));
                source.send(None);
            })
        };
        (source, reader)
    }

    fn send(&self, input: Option<Input>) {
        let waiting = {
            let mut wire = self.0.lock().unwrap();
            match input {
                Some(input) => wire.frames.push_back(input),
                None => wire.closed = true,
            }
            std::mem::take(&mut wire.waiting)
        };
        waiting.into_iter().for_each(std::task::Waker::wake);
    }
}

impl Source for FakeSource {
    fn poll_next(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Input>> {
        let mut wire = self.0.lock().unwrap();
        if let Some(input) = wire.frames.pop_front() {
            return std::task::Poll::Ready(Some(input));
        }
        if wire.closed {
            return std::task::Poll::Ready(None);
        }
        wire.waiting.push(cx.waker().clone());
        std::task::Poll::Pending
    }

    fn ended(&self) -> (CloseReason, bool) {
        (CloseReason::PeerClosed, true)
    }
}

/// The pump thread's loop. Its timed looks never fire here: a handle that waits must never
/// need them.
fn run_pump(core: &Core, source: &FakeSource) {
    let (mut seen, mut again) = (0, None);
    loop {
        let pumped = block_on(poll_fn(|cx| {
            pump::poll_pump(core, source, &mut seen, &mut again, cx).map(|pumped| match pumped {
                Pumped::Routed(role, refills) => {
                    assert!(refills.is_empty());
                    drop(role);
                    true
                }
                Pumped::Ended => false,
            })
        }));
        if !pumped {
            return;
        }
    }
}

fn item_id(event: Option<Event>) -> String {
    match event {
        Some(Event::Folded {
            outcome: msp_session::Outcome::Item { item_id, .. },
            ..
        }) => item_id,
        other => panic!("{other:?}"),
    }
}

#[test]
fn loom_a_waiting_handle_gets_the_frames_in_wire_order_whoever_routes_them() {
    model(|| {
        let core = core();
        let (source, reader) = FakeSource::reading(&[1, 2]);
        let pump = {
            let (core, source) = (core.clone(), source.clone());
            spawn(move || run_pump(&core, &source))
        };
        let handle = spawn(move || {
            // A wait a call, as the blocking driver's `next_event`.
            let next = || {
                let mut wait = core.handle_wait(core.place_of(SESSION));
                block_on(poll_fn(|cx| {
                    let check = Slot::next_event;
                    pump::poll_handle(&mut wait, &*source, None, cx, check, |refills| {
                        assert!(refills.is_empty())
                    })
                }))
            };
            assert_eq!(item_id(next()), "i1");
            assert_eq!(item_id(next()), "i2");
            assert!(
                matches!(next(), Some(Event::Closed { .. })),
                "the end's event"
            );
            assert!(next().is_none(), "the end, once every frame was taken");
        });
        handle.join().unwrap();
        reader.join().unwrap();
        pump.join().unwrap();
    });
}

/// A handle's wait for the session's next event, routing as the blocking driver's does.
fn wait_event(core: &Core, source: &FakeSource) -> Option<Event> {
    let mut wait: HandleWait<'_> = core.handle_wait(core.place_of(SESSION));
    block_on(poll_fn(|cx| {
        pump::poll_handle(&mut wait, source, None, cx, Slot::next_event, |refills| {
            assert!(refills.is_empty())
        })
    }))
}

#[test]
fn loom_a_request_among_the_frames_reaches_the_events_in_wire_order_whoever_routes_it() {
    model(|| {
        let core = core();
        let (source, reader) = FakeSource::delivering(vec![started(1), question(), started(2)]);
        let pump = {
            let (core, source) = (core.clone(), source.clone());
            spawn(move || run_pump(&core, &source))
        };
        let handle = spawn(move || {
            let mut methods = Vec::new();
            while let Some(event) = wait_event(&core, &source) {
                match event {
                    Event::Folded { input, .. } => methods.push(input.method().unwrap().to_owned()),
                    Event::Closed { .. } => methods.push("closed".to_owned()),
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(
                methods,
                [
                    "item/started",
                    "userInput/request",
                    "item/started",
                    "closed"
                ]
            );
            core.read(SESSION, |fold| assert_eq!(fold.pending_prompts().len(), 1));
        });
        handle.join().unwrap();
        reader.join().unwrap();
        pump.join().unwrap();
    });
}

/// A wait that meets the connection's end while a refill of its session is in flight (on
/// a thread of its own) parks until the refill folded what it held, and then sees the end:
/// nothing the host said before it is missed.
#[test]
fn loom_a_wait_at_the_end_sees_what_a_refill_in_flight_held() {
    model(|| {
        let core = core();
        let _ = core.route(started(1));
        let Routed::Refill(refilling) = core.route(INPUTS.gap.clone()) else {
            panic!("a refill");
        };
        let _ = core.route(started(2));
        // The connection ended (the host durable): its last frame was taken.
        let source = Arc::new(FakeSource::default());
        source.send(None);
        let refill = {
            let core = core.clone();
            spawn(move || drop(Paging::new(core, vec![refilling])))
        };
        let mut events = Vec::new();
        while let Some(event) = wait_event(&core, &source) {
            events.push(event);
        }
        assert!(
            matches!(events.pop(), Some(Event::Closed { .. })),
            "the end last"
        );
        assert_eq!(
            item_id(events.pop()),
            "i2",
            "the input the refill held, before the end"
        );
        refill.join().unwrap();
    });
}

#[test]
fn loom_a_stop_ends_a_blocking_handlers_wait_while_it_holds_the_role_or_parks() {
    model(|| {
        let core = core();
        // A connection that says nothing: only the stop can end the wait.
        let source = Arc::new(FakeSource::default());
        let stop = HandlerStop::new();
        let stopping = {
            let stop = stop.clone();
            spawn(move || stop.stop())
        };
        stop.watch(&core, SESSION);
        let mut wait = core.handle_wait(core.place_of(SESSION));
        block_on(poll_fn(|cx| {
            let check = |_: &mut Slot, _: Option<&CloseReason>| stop.is_stopped().then_some(());
            pump::poll_handle(&mut wait, &*source, None, cx, check, |refills| {
                assert!(refills.is_empty())
            })
        }));
        stopping.join().unwrap();
    });
}

#[test]
fn loom_two_waiting_handles_route_by_turns_and_each_gets_what_it_waits_for() {
    model(|| {
        let core = core();
        let (source, reader) = FakeSource::reading(&[1, 2]);
        // No pump thread: the handles alone route, one holder of the role at a time.
        let other = {
            let (core, source) = (core.clone(), source.clone());
            spawn(move || {
                let mut wait = core.handle_wait(core.place_of(SESSION));
                block_on(poll_fn(|cx| {
                    let check = |slot: &mut Slot, ended: Option<&CloseReason>| {
                        slot.check_fold(ended, |fold, _| (fold.items().len() == 2).then_some(()))
                    };
                    pump::poll_handle(&mut wait, &*source, None, cx, check, |refills| {
                        assert!(refills.is_empty())
                    })
                }))
            })
        };
        assert_eq!(item_id(wait_event(&core, &source)), "i1");
        assert_eq!(item_id(wait_event(&core, &source)), "i2");
        assert!(other.join().unwrap().is_ok(), "both items folded");
        reader.join().unwrap();
    });
}

#[test]
fn loom_the_pump_routes_when_no_handle_waits() {
    model(|| {
        let core = core();
        let (source, reader) = FakeSource::reading(&[1]);
        let pump = {
            let core = core.clone();
            spawn(move || run_pump(&core, &source))
        };
        reader.join().unwrap();
        pump.join().unwrap();
        core.read(SESSION, |fold| assert_eq!(fold.items().len(), 1));
        assert_eq!(item_id(next_event(&core)), "i1");
    });
}
