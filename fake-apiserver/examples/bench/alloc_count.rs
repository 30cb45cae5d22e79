//! Counting heap allocations: the bench's global allocator is the one the `fake-apiserver`
//! binary uses (mimalloc with the package's default `mimalloc` feature, the system allocator
//! with `--no-default-features`), wrapped to count the allocations (and bytes) this thread asks
//! for, so that a figure can say how many a request costs. Unlike a rate, the count does not move
//! with the machine's speed or load: it is the figure to watch while taking allocations out of a
//! path.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

/// The allocator every call is forwarded to: the binary's.
#[cfg(feature = "mimalloc")]
const INNER: fake_apiserver::allocator::MiMalloc = fake_apiserver::allocator::MiMalloc;
#[cfg(not(feature = "mimalloc"))]
const INNER: std::alloc::System = std::alloc::System;

/// The name of the allocator the figures were measured with, for the report.
pub const NAME: &str = if cfg!(feature = "mimalloc") {
    "mimalloc"
} else {
    "system"
};

/// [`INNER`], counting per thread.
pub struct Counting;

thread_local! {
    static COUNTS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

fn count(size: usize) {
    // `try_with`: a thread being torn down has no counter left; its allocations go uncounted.
    let _ = COUNTS.try_with(|c| {
        let (n, bytes) = c.get();
        c.set((n + 1, bytes + size as u64));
    });
}

// SAFETY: every call is forwarded to `INNER` unchanged; counting touches only a thread-local
// `Cell` with a `const` initializer, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is `INNER`'s.
        unsafe { INNER.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as `alloc`.
        unsafe { INNER.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: as `alloc`.
        unsafe { INNER.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`.
        unsafe { INNER.dealloc(ptr, layout) }
    }
}

/// Allocations (reallocations included) and bytes asked for by this thread so far.
fn this_thread() -> (u64, u64) {
    COUNTS.try_with(Cell::get).unwrap_or_default()
}

/// This thread's counts at a point in time.
pub struct Since((u64, u64));

impl Since {
    /// Starts counting from now.
    pub fn now() -> Self {
        Since(this_thread())
    }

    /// Allocations and bytes per operation since [`Since::now`], over `operations`.
    pub fn per(&self, operations: u64) -> (f64, f64) {
        let ((count, bytes), (count_after, bytes_after)) = (self.0, this_thread());
        let n = operations.max(1) as f64;
        (
            (count_after - count) as f64 / n,
            (bytes_after - bytes) as f64 / n,
        )
    }
}
