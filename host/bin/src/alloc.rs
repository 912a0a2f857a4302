//! The allocator of every process that links the host (the `relay`
//! binary, its tests and benches): jemalloc, with its retention bounded.
//!
//! A quote allocates and frees hundreds of small objects across the
//! runtime's threads (JSON, the book's answers, the edge's headers); glibc's
//! arenas spend a sixth of a warm quote's CPU in `malloc`, `free` and their
//! consolidation, and jemalloc's per-thread caches do not. What an
//! allocator keeps after a burst is the other half of the choice: here
//! jemalloc's background thread hands pages freed a second ago back to the
//! kernel ([`MALLOC_CONF`]), so memory taken at start (compiling plugins)
//! or by a burst of quotes does not stay resident.
//!
//! An operator can change the settings without a rebuild: jemalloc reads
//! `_RJEM_MALLOC_CONF` from the environment at start, over these.
//! Native plugins keep their own allocator (each cdylib links its own;
//! nothing allocated on one side of the ABI is freed on the other).

use std::ffi::c_char;

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// A C string pointer jemalloc reads once, at its first allocation.
#[repr(transparent)]
pub struct ConfString(*const c_char);

// SAFETY: the pointer is to a static, immutable, NUL-terminated string.
unsafe impl Sync for ConfString {}

/// jemalloc's compiled-in settings (its `malloc_conf` symbol, prefixed as
/// the `tikv-jemalloc-sys` build names it): a background thread purges
/// dirty pages a second after they are freed (`dirty_decay_ms`), skipping
/// the lazy "muzzy" stage (`muzzy_decay_ms:0`) so RSS falls at once.
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static MALLOC_CONF: ConfString =
    ConfString(c"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0".as_ptr());

#[cfg(test)]
mod tests {
    use std::ffi::{c_void, CStr};

    /// One of jemalloc's `opt.*` settings as it is in effect.
    fn opt<T: Default>(name: &CStr) -> T {
        let mut value = T::default();
        let mut len = std::mem::size_of::<T>();
        // SAFETY: `value` is a `T` of `len` bytes, the type jemalloc
        // documents for `name`; nothing is written to jemalloc.
        let rc = unsafe {
            tikv_jemalloc_sys::mallctl(
                name.as_ptr(),
                (&raw mut value).cast::<c_void>(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        assert_eq!(rc, 0, "mallctl {name:?}");
        value
    }

    /// The settings reach jemalloc: a `malloc_conf` symbol under the
    /// wrong name would be ignored without a word.
    #[test]
    fn the_compiled_in_settings_are_in_effect() {
        if std::env::var_os("_RJEM_MALLOC_CONF").is_some() {
            return; // the operator's settings win, as documented
        }
        assert!(opt::<bool>(c"opt.background_thread"));
        assert_eq!(opt::<isize>(c"opt.dirty_decay_ms"), 1_000);
        assert_eq!(opt::<isize>(c"opt.muzzy_decay_ms"), 0);
    }
}
