//! An in-memory pipe for the blocking driver: bytes written to one end are read at the other,
//! with an OS pipe's manners (a bounded buffer that blocks the writer when full, end of input
//! once the writer is dropped, `BrokenPipe` once the reader is). For tests and in-process hosts.
//!
//! ```
//! use std::io::{Read, Write};
//!
//! let (mut reader, mut writer) = msp_rpc::pipe::pipe();
//! writer.write_all(b"{}\n").unwrap();
//! drop(writer);
//! let mut text = String::new();
//! reader.read_to_string(&mut text).unwrap();
//! assert_eq!(text, "{}\n");
//! ```

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// How many bytes a pipe holds before a writer waits, as an OS pipe does.
pub const CAPACITY: usize = 64 * 1024;

#[derive(Debug, Default)]
struct State {
    bytes: VecDeque<u8>,
    writer_gone: bool,
    reader_gone: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The reading end.
#[derive(Debug)]
pub struct PipeReader(Arc<Shared>);

/// The writing end; dropping it ends the reader's input.
#[derive(Debug)]
pub struct PipeWriter(Arc<Shared>);

/// A new pipe.
pub fn pipe() -> (PipeReader, PipeWriter) {
    let shared = Arc::new(Shared::default());
    (PipeReader(shared.clone()), PipeWriter(shared))
}

impl Read for PipeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut state = self.0.lock();
        while state.bytes.is_empty() && !state.writer_gone {
            state = self
                .0
                .changed
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        let n = {
            let (front, _) = state.bytes.as_slices();
            let n = buf.len().min(front.len());
            buf[..n].copy_from_slice(&front[..n]);
            n
        };
        state.bytes.drain(..n);
        self.0.changed.notify_all();
        Ok(n)
    }
}

impl Write for PipeWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut state = self.0.lock();
        loop {
            if state.reader_gone {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the reading end is gone",
                ));
            }
            if state.bytes.len() < CAPACITY {
                break;
            }
            state = self
                .0
                .changed
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        let n = buf.len().min(CAPACITY - state.bytes.len());
        state.bytes.extend(&buf[..n]);
        self.0.changed.notify_all();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        self.0.lock().reader_gone = true;
        self.0.changed.notify_all();
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        self.0.lock().writer_gone = true;
        self.0.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_pipe_blocks_the_writer_until_read_and_breaks_when_the_reader_goes() {
        let (mut reader, mut writer) = pipe();
        let big = vec![7u8; CAPACITY * 3];
        let expected = big.clone();
        let writing = std::thread::spawn(move || {
            writer.write_all(&big).unwrap();
            writer
        });
        let mut got = vec![0u8; expected.len()];
        reader.read_exact(&mut got).unwrap();
        assert_eq!(got, expected);
        let mut writer = writing.join().unwrap();
        drop(reader);
        let error = writer.write(b"x").unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
    }
}
