//! A hint to the processor's cache, for the hot paths whose next memory access is known ahead.

/// Asks the processor to bring the cache line holding `value` into its nearest cache without
/// waiting for it: unlike a read, a prefetch retires at once, so the miss overlaps with the
/// work in between. A no-op where the architecture has no prefetch the crate uses.
#[inline]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults and reads or writes no memory.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
