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
