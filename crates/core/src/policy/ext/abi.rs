//! A C ABI for policies in a shared library (`--policy rust:PATH:NAME`): the one
//! boundary where a policy crate built apart from the `reclaimlab` that loads it (another
//! compiler, another reclaimlab-core version) meets it. Only C types cross it: the
//! library's [`CacheExtOps`] objects live and die inside the library, behind an opaque
//! state pointer, and every call is a plain `extern "C"` function of [`PolicyV1`].
//!
//! What this file owns: the table ([`PolicyV1`], [`ABI_VERSION`]), the library side (the
//! functions the table points to, and the macro a policy crate
//! invokes once to export its policies by name: `export_cache_ext_policies!`), and the loader side ([`DylibOps`]:
//! a [`CacheExtOps`] over a loaded table). Opening the library (dlopen) is the caller's
//! (the Python bindings); the engine never loads code.
//!
//! Invariants: every function catches a panic (none unwinds across the boundary; it
//! becomes the hook's error); a state pointer comes from `attach` and is used by one
//! thread at a time until `detach`.
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::{CacheExtOps, Event, EvictionCtx, Folio, LruvecInfo, OpsFactory, EVICT_CTX_MAX};

/// Bumped whenever [`PolicyV1`] or the meaning of a call changes.
pub const ABI_VERSION: u32 = 1;

/// The symbol a library exports: `extern "C" fn() -> *const PolicyV1`.
pub const SYMBOL: &[u8] = b"reclaimlab_policy_v1\0";

/// An error message written by the library (NUL-terminated, truncated to fit).
#[repr(C)]
pub struct ErrBuf {
    pub msg: [u8; 512],
}

impl ErrBuf {
    pub fn new() -> Self {
        ErrBuf { msg: [0; 512] }
    }
    fn set(&mut self, s: &str) {
        let n = s.len().min(self.msg.len() - 1);
        self.msg[..n].copy_from_slice(&s.as_bytes()[..n]);
        self.msg[n] = 0;
    }
    pub fn text(&self) -> String {
        let end = self.msg.iter().position(|&b| b == 0).unwrap_or(self.msg.len());
        String::from_utf8_lossy(&self.msg[..end]).into_owned()
    }
}

impl Default for ErrBuf {
    fn default() -> Self {
        Self::new()
    }
}

/// The table a library exports. Return codes: 0 ok, -1 error (message in `err`).
#[repr(C)]
pub struct PolicyV1 {
    pub abi: u32,
    /// The policy `name` for one lruvec (cache_ext's `init`): a state pointer, or null
    /// with the message in `err` (an unknown name lists the library's names).
    pub attach: unsafe extern "C" fn(name: *const c_char, memcg: *const c_char, node: u16, err: *mut ErrBuf) -> *mut c_void,
    /// `evict_folios`: up to `cap` candidates into `out`, their number (all of them, even
    /// beyond `cap`) into `n_out`.
    pub evict_folios: unsafe extern "C" fn(st: *mut c_void, nr: u32, out: *mut u32, cap: u32, n_out: *mut u32, err: *mut ErrBuf) -> i32,
    /// The batched `folio_added`/`folio_accessed`/`folio_removed` ([`Event`] layout).
    pub events: unsafe extern "C" fn(st: *mut c_void, ev: *const u64, n: usize, err: *mut ErrBuf) -> i32,
    /// `admit_folio`: 1 admit, 0 refuse, -1 error.
    pub admit_folio: unsafe extern "C" fn(st: *mut c_void, folio: u32, err: *mut ErrBuf) -> i32,
    /// Bit 0: implements `admit_folio`; bit 1: implements `folio_accessed`.
    pub hooks: unsafe extern "C" fn(st: *mut c_void) -> u32,
    pub detach: unsafe extern "C" fn(st: *mut c_void),
    /// Silence the library's panic messages (a panic becomes the hook's error, which the
    /// loader reports): called once by a loader that opened the library.
    pub quiet_panics: extern "C" fn(),
}

// ---- library side ----

/// A library's policy maker: the policy `name` for one lruvec, `None` if it has no such name.
pub type Make = fn(name: &str, lruvec: &LruvecInfo) -> Option<Result<Box<dyn CacheExtOps>, String>>;

fn guard<T>(err: *mut ErrBuf, fail: T, f: impl FnOnce() -> Result<T, String>) -> T {
    let r = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default();
        Err(format!("panicked: {msg}"))
    });
    r.unwrap_or_else(|e| {
        if !err.is_null() {
            // SAFETY: the caller passes a valid ErrBuf or null.
            unsafe { (*err).set(&e) };
        }
        fail
    })
}

/// # Safety
/// `name` and `memcg` are NUL-terminated strings; `err` is valid or null.
pub unsafe fn attach(make: Make, names: &str, name: *const c_char, memcg: *const c_char, node: u16, err: *mut ErrBuf) -> *mut c_void {
    guard(err, std::ptr::null_mut(), || {
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
        let memcg = unsafe { CStr::from_ptr(memcg) }.to_string_lossy().into_owned();
        let info = LruvecInfo { memcg, node };
        let mut ops = make(&name, &info).ok_or_else(|| format!("no policy {name} in this library (it has: {names})"))??;
        ops.init(&info)?;
        Ok(Box::into_raw(Box::new(ops)) as *mut c_void)
    })
}

unsafe fn ops<'a>(st: *mut c_void) -> &'a mut Box<dyn CacheExtOps> {
    // SAFETY: `st` came from `attach` and is used by one thread at a time.
    unsafe { &mut *(st as *mut Box<dyn CacheExtOps>) }
}

/// # Safety
/// `st` from [`attach`]; `out` holds `cap` entries; `n_out` and `err` valid.
pub unsafe extern "C" fn lib_evict_folios(st: *mut c_void, nr: u32, out: *mut u32, cap: u32, n_out: *mut u32, err: *mut ErrBuf) -> i32 {
    guard(err, -1, || {
        let mut ctx = EvictionCtx { request_nr_folios_to_evict: nr as usize, folios_to_evict: Vec::new() };
        unsafe { ops(st) }.evict_folios(&mut ctx)?;
        let n = ctx.folios_to_evict.len().min(cap as usize);
        unsafe {
            std::ptr::copy_nonoverlapping(ctx.folios_to_evict.as_ptr(), out, n);
            *n_out = ctx.folios_to_evict.len().min(u32::MAX as usize) as u32;
        }
        Ok(0)
    })
}

/// # Safety
/// `st` from [`attach`]; `ev` holds `n` events.
pub unsafe extern "C" fn lib_events(st: *mut c_void, ev: *const u64, n: usize, err: *mut ErrBuf) -> i32 {
    guard(err, -1, || {
        // SAFETY: Event is repr(transparent) over u64.
        let events = unsafe { std::slice::from_raw_parts(ev as *const Event, n) };
        unsafe { ops(st) }.events(events).map(|()| 0)
    })
}

/// # Safety
/// `st` from [`attach`].
pub unsafe extern "C" fn lib_admit_folio(st: *mut c_void, folio: u32, err: *mut ErrBuf) -> i32 {
    guard(err, -1, || unsafe { ops(st) }.admit_folio(folio).map(i32::from))
}

/// # Safety
/// `st` from [`attach`].
pub unsafe extern "C" fn lib_hooks(st: *mut c_void) -> u32 {
    guard(std::ptr::null_mut(), 3, || {
        let o = unsafe { ops(st) };
        Ok(u32::from(o.has_admit_folio()) | u32::from(o.has_folio_accessed()) << 1)
    })
}

/// # Safety
/// `st` from [`attach`], not used afterwards.
pub unsafe extern "C" fn lib_detach(st: *mut c_void) {
    let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(st as *mut Box<dyn CacheExtOps>) })));
}

/// The library's own panic hook (its std is its own): silent.
pub extern "C" fn lib_quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

/// Export a crate's policies from its `cdylib` for `--policy rust:PATH:NAME`:
///
/// ```ignore
/// reclaimlab_core::export_cache_ext_policies! {
///     "MRU" => |_lruvec| Ok(Box::new(Mru::default())),
/// }
/// ```
///
/// Each arm maps a name to a closure making the policy for one lruvec
/// (`&LruvecInfo -> Result<Box<dyn CacheExtOps>, String>`).
#[macro_export]
macro_rules! export_cache_ext_policies {
    ($($name:literal => $make:expr),+ $(,)?) => {
        /// The policy table `reclaimlab run --policy rust:PATH:NAME` loads.
        #[no_mangle]
        pub extern "C" fn reclaimlab_policy_v1() -> *const $crate::policy::ext::abi::PolicyV1 {
            use $crate::policy::ext::abi as __abi;
            use $crate::policy::ext::{CacheExtOps as __Ops, LruvecInfo as __Info};
            fn __make(name: &str, l: &__Info) -> Option<Result<Box<dyn __Ops>, String>> {
                $(if name == $name {
                    let f: fn(&__Info) -> Result<Box<dyn __Ops>, String> = $make;
                    return Some(f(l));
                })+
                None
            }
            unsafe extern "C" fn __attach(name: *const ::std::ffi::c_char, memcg: *const ::std::ffi::c_char, node: u16, err: *mut __abi::ErrBuf) -> *mut ::std::ffi::c_void {
                unsafe { __abi::attach(__make, concat!($($name, " "),+).trim_end(), name, memcg, node, err) }
            }
            static __TABLE: __abi::PolicyV1 = __abi::PolicyV1 {
                abi: __abi::ABI_VERSION,
                attach: __attach,
                evict_folios: __abi::lib_evict_folios,
                events: __abi::lib_events,
                admit_folio: __abi::lib_admit_folio,
                hooks: __abi::lib_hooks,
                detach: __abi::lib_detach,
                quiet_panics: __abi::lib_quiet_panics,
            };
            &__TABLE
        }
    };
}

// ---- loader side ----

/// A policy instance inside a loaded library.
pub struct DylibOps {
    table: &'static PolicyV1,
    st: *mut c_void,
    hooks: u32,
    out: Vec<u32>,
}

// SAFETY: the state is used by the one engine thread that owns this value at a time.
unsafe impl Send for DylibOps {}

impl Drop for DylibOps {
    fn drop(&mut self) {
        // SAFETY: `st` came from this table's attach and is not used again.
        unsafe { (self.table.detach)(self.st) }
    }
}

fn call(f: impl FnOnce(*mut ErrBuf) -> i32) -> Result<i32, String> {
    let mut err = ErrBuf::new();
    let r = f(&mut err);
    if r < 0 {
        Err(err.text())
    } else {
        Ok(r)
    }
}

impl CacheExtOps for DylibOps {
    fn evict_folios(&mut self, ctx: &mut EvictionCtx) -> Result<(), String> {
        let mut n = 0u32;
        let (out, cap) = (self.out.as_mut_ptr(), self.out.len() as u32);
        // SAFETY: `out` holds `cap` entries.
        call(|err| unsafe { (self.table.evict_folios)(self.st, ctx.request_nr_folios_to_evict as u32, out, cap, &mut n, err) })?;
        if n as usize > EVICT_CTX_MAX {
            return Err(format!("returned {n} folios; the eviction context holds {EVICT_CTX_MAX}"));
        }
        ctx.folios_to_evict.extend_from_slice(&self.out[..n as usize]);
        Ok(())
    }
    fn admit_folio(&mut self, folio: Folio) -> Result<bool, String> {
        call(|err| unsafe { (self.table.admit_folio)(self.st, folio, err) }).map(|r| r != 0).map_err(|e| format!("folio {folio}: {e}"))
    }
    fn has_admit_folio(&self) -> bool {
        self.hooks & 1 != 0
    }
    fn has_folio_accessed(&self) -> bool {
        self.hooks & 2 != 0
    }
    fn events(&mut self, events: &[Event]) -> Result<(), String> {
        call(|err| unsafe { (self.table.events)(self.st, events.as_ptr() as *const u64, events.len(), err) }).map(|_| ())
    }
}

/// The engine's factory over a loaded table: policy `name` of the library, one instance
/// per lruvec.
///
/// # Safety
/// `table` points to a [`PolicyV1`] of a library that stays loaded for the process's life.
pub unsafe fn factory(table: *const PolicyV1, name: &str) -> Result<OpsFactory, String> {
    // SAFETY: per the contract above.
    let table: &'static PolicyV1 = unsafe { &*table };
    if table.abi != ABI_VERSION {
        return Err(format!("the library's policy ABI is version {}, this reclaimlab's is {ABI_VERSION}", table.abi));
    }
    let cname = CString::new(name).map_err(|_| "a policy name cannot hold a NUL byte".to_string())?;
    Ok(Box::new(move |info: &LruvecInfo| {
        let memcg = CString::new(info.memcg.as_str()).map_err(|_| "memcg name holds a NUL byte".to_string())?;
        let mut err = ErrBuf::new();
        // SAFETY: NUL-terminated strings and a valid ErrBuf.
        let st = unsafe { (table.attach)(cname.as_ptr(), memcg.as_ptr(), info.node, &mut err) };
        if st.is_null() {
            return Err(err.text());
        }
        // SAFETY: `st` is a live state of this table.
        let hooks = unsafe { (table.hooks)(st) };
        Ok(Box::new(DylibOps { table, st, hooks, out: vec![0; 4 * EVICT_CTX_MAX] }) as Box<dyn CacheExtOps>)
    }))
}
