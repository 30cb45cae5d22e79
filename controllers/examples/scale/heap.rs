//! Heap accounting for the scale bench: mimalloc (the global allocator of both binaries the bench
//! stands for, `fake-apiserver` and `controllers`), counting the bytes live now, their peak, and the bytes each thread allocated (so a measurement on one thread, e.g. the size of
//! a deep copy of a cache, is not disturbed by the other threads' allocations).
//!
//! The peak of live heap bytes next to the peak RSS tells how much of the RSS is the program's
//! own data and how much the allocator keeps (fragmentation, per-thread arenas).

use std::alloc::{GlobalAlloc, Layout};

use fake_apiserver::allocator::MiMalloc;
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};

/// Counts live bytes; otherwise mimalloc.
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    /// Net bytes allocated by this thread (allocations minus frees).
    static THREAD_NET: Cell<isize> = const { Cell::new(0) };
}

fn add(bytes: isize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    // A read first: the read-modify-write (contended between threads) only when a new peak.
    if bytes > 0 && live > PEAK.load(Ordering::Relaxed) {
        PEAK.fetch_max(live, Ordering::Relaxed);
    }
    // `try_with`: during thread teardown the slot may be gone.
    let _ = THREAD_NET.try_with(|c| c.set(c.get() + bytes));
}

// SAFETY: every call is forwarded to `MiMalloc` with the caller's layout and pointer unchanged;
// the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { MiMalloc.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { MiMalloc.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { MiMalloc.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { MiMalloc.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Heap bytes live now.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed).max(0) as usize
}

/// The most heap bytes live at once so far.
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed).max(0) as usize
}

/// Heap bytes `f`'s result holds, measured on this thread: what `f` allocated and did not free.
/// For a deep copy of a structure, about the heap the original holds (a copy's strings and
/// vectors are exactly sized; the original's may have spare capacity).
pub fn held_by<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = THREAD_NET.with(Cell::get);
    let value = f();
    let after = THREAD_NET.with(Cell::get);
    (value, (after - before).max(0) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test binary's global allocator is [`Counting`] (set in `scale.rs`).
    #[test]
    fn the_peak_follows_a_new_high_and_stays() {
        let before = peak();
        // `black_box`: an unused allocation may otherwise be optimised away.
        let block: Vec<u8> = std::hint::black_box(Vec::with_capacity(64 << 20));
        let high = peak();
        assert!(
            high >= before.max(64 << 20),
            "peak {high} after a 64 MiB block"
        );
        assert!(live() >= 64 << 20);
        drop(block);
        assert!(peak() >= high, "the peak never goes down");
        let (kept, held) = held_by(|| std::hint::black_box(Vec::<u8>::with_capacity(1 << 20)));
        assert!(held >= 1 << 20, "held_by saw {held}");
        drop(kept);
    }
}
