//! A global allocator that counts live heap bytes and their peak, for the generation and fold
//! benches.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

// Counting is on only inside `peak_during`, so that timed runs pay one relaxed load per call.
// Bytes freed inside a window that were allocated outside it make `LIVE` drop below the start;
// hence signed.
static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// The system allocator, counting. Install it in a bench binary with `#[global_allocator]`.
pub struct Counting;

fn grow(by: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        let by = by as isize;
        let live = LIVE.fetch_add(by, Ordering::Relaxed) + by;
        PEAK.fetch_max(live, Ordering::Relaxed);
    }
}

fn shrink(by: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        LIVE.fetch_sub(by as isize, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed to `System` unchanged; only the byte counts are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc(layout);
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc_zeroed(layout);
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        shrink(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = System.realloc(ptr, layout, new_size);
        if !new.is_null() {
            if new_size > layout.size() {
                grow(new_size - layout.size());
            } else {
                shrink(layout.size() - new_size);
            }
        }
        new
    }
}

/// Runs `f` and returns its result with the peak of the heap bytes it allocated and had not
/// yet freed. Zero unless [`Counting`] is the global allocator. Not reentrant.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LIVE.store(0, Ordering::Relaxed);
    PEAK.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let out = f();
    COUNTING.store(false, Ordering::Relaxed);
    let peak = PEAK.load(Ordering::Relaxed);
    (out, peak.max(0) as usize)
}

/// Runs `f` and returns its result with the heap bytes allocated inside `f` and still live
/// when it returns: what the result keeps. Zero unless [`Counting`] is the global allocator.
/// Not reentrant.
pub fn kept_by<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LIVE.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let out = f();
    COUNTING.store(false, Ordering::Relaxed);
    (out, LIVE.load(Ordering::Relaxed).max(0) as usize)
}
