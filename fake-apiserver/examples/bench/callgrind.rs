//! Counting one figure's instructions under callgrind (`make bench-instructions`,
//! `fake-apiserver/tools/instructions.py`): the speed figures drift with the machine, the
//! instructions an operation executes do not.
//!
//! Each figure whose allocations are counted (`.allocs`: a fixed number of calls after the
//! figure's timed run, so after every lazy start-up cost) marks those calls as a [`Collect`]
//! region. Run under `valgrind --tool=callgrind --collect-atstart=no` with
//! `BENCH_CALLGRIND_COLLECT=<figure>`, callgrind collects inside that figure's region alone, and
//! the instructions collected divided by the calls made are the figure's instructions per call.
//! Outside valgrind (or for any other figure) a region does nothing.

/// The environment variable naming the figure whose region callgrind collects.
pub const COLLECT_ENV: &str = "BENCH_CALLGRIND_COLLECT";

/// A region of calls counted for the figure it was started for: callgrind collects from
/// [`Collect::start`] to the drop, when that figure is the one asked for.
pub struct Collect {
    on: bool,
}

impl Collect {
    /// Starts the region of `figure` (collecting, if it is the one asked for).
    pub fn start(figure: &str) -> Self {
        Self::start_if(std::env::var(COLLECT_ENV).ok().as_deref() == Some(figure))
    }

    /// Starts a region that collects when `on`.
    fn start_if(on: bool) -> Self {
        if on {
            toggle_collect();
        }
        Collect { on }
    }
}

impl Drop for Collect {
    fn drop(&mut self) {
        if self.on {
            toggle_collect();
        }
    }
}

/// `CALLGRIND_TOGGLE_COLLECT` (valgrind's `callgrind.h`): a client request, the special
/// instruction sequence valgrind recognizes. On a real CPU the sequence changes nothing
/// (`rdi` is rotated by 128 bits in all, `xchg rbx, rbx` is a no-op).
#[cfg(target_arch = "x86_64")]
fn toggle_collect() {
    // `VG_USERREQ_TOOL_BASE('C', 'T')` + 2: `VG_USERREQ__TOGGLE_COLLECT`.
    const TOGGLE_COLLECT: u64 = ((b'C' as u64) << 24 | (b'T' as u64) << 16) + 2;
    let request: [u64; 6] = [TOGGLE_COLLECT, 0, 0, 0, 0, 0];
    let mut result: u64 = 0;
    // SAFETY: the sequence only rotates `rdi` back to its value and exchanges `rbx` with
    // itself; under valgrind, `rax` points at the six-word request it reads, which lives
    // across the asm block, and `rdx` receives the (unused) answer.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") result,
            in("rax") request.as_ptr(),
            out("rdi") _,
            options(nostack),
        );
    }
    std::hint::black_box(result);
}

/// Elsewhere valgrind's requests are other sequences; the figures are counted on x86_64 only.
#[cfg(not(target_arch = "x86_64"))]
fn toggle_collect() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_valgrind_a_region_changes_nothing() {
        // The request sequence runs, both ways, and the program goes on.
        let mut x = std::hint::black_box(41);
        let region = Collect::start_if(true);
        x += 1;
        assert!(region.on);
        drop(region);
        assert_eq!(x, 42);
        assert!(!Collect::start("bench.test.not-asked-for").on);
    }
}
