//! Python policies: a `reclaimlab.Policy` instance behind cache_ext's hooks
//! (`reclaimlab_core::policy::ext::CacheExtOps`). The engine runs without the GIL; each
//! hook call takes it. `folio_added`/`folio_accessed`/`folio_removed` arrive batched: one
//! call of the instance's `_events(bytes)` per batch (little-endian u64 per event,
//! `folio << 2 | kind`), which dispatches to the hooks in Python (python/reclaimlab/policy.py).
//! A Python exception becomes the hook's error, one line (`Type: message`), which stops
//! the run; no traceback is printed.
//!
//! Also the loader of `rust:PATH:NAME` policies: a shared library opened once per path
//! (dlopen, kept for the process's life) whose C table
//! (`reclaimlab_core::policy::ext::abi`) the engine calls.
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use reclaimlab_core::policy::ext::{CacheExtOps, Event, EvictionCtx, Folio, LruvecInfo, OpsFactory, EVICT_CTX_MAX};

struct PyOps {
    obj: Py<PyAny>,
    /// The class overrides `admit_folio` (else it is not called: one call per fault),
    /// `folio_accessed` (else those events are not sent).
    admit: bool,
    accessed: bool,
    bytes: Vec<u8>,
}

/// `Type: message` of a Python exception; a `_HookError` raised by `Policy._events`
/// already names the hook and the folio.
fn describe(py: Python<'_>, e: PyErr) -> String {
    let value = e.value(py);
    let msg = if let Ok(msg) = value.getattr("reclaimlab_hook_message").and_then(|m| m.extract::<String>()) {
        msg
    } else {
        let ty = value.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
        let msg = value.str().map(|s| s.to_string()).unwrap_or_default();
        if msg.is_empty() {
            ty
        } else {
            format!("{ty}: {}", msg.lines().next().unwrap_or(""))
        }
    };
    if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
        // Ctrl-C: re-armed (after the last Python call here), so the run's caller raises
        // KeyboardInterrupt (lib.rs, run); the policy is not called again.
        // SAFETY: called with the GIL held.
        unsafe { pyo3::ffi::PyErr_SetInterrupt() };
    }
    msg
}

impl CacheExtOps for PyOps {
    fn init(&mut self, lruvec: &LruvecInfo) -> Result<(), String> {
        Python::attach(|py| self.obj.call_method1(py, "init", (lruvec.memcg.as_str(), lruvec.node)).map(|_| ()).map_err(|e| describe(py, e)))
    }

    fn evict_folios(&mut self, ctx: &mut EvictionCtx) -> Result<(), String> {
        Python::attach(|py| {
            let r = self.obj.call_method1(py, "evict_folios", (ctx.request_nr_folios_to_evict,)).map_err(|e| describe(py, e))?;
            let r = r.bind(py);
            if r.is_none() {
                return Ok(());
            }
            let it = r.try_iter().map_err(|_| format!("returned a {}, not an iterable of folios", r.get_type().name().map(|n| n.to_string()).unwrap_or_default()))?;
            for item in it {
                let item = item.map_err(|e| describe(py, e))?;
                let k: Folio = item
                    .extract()
                    .map_err(|_| format!("returned {}, which is not a folio (an int of the folio_added hook)", item.repr().map(|s| s.to_string()).unwrap_or_default()))?;
                ctx.folios_to_evict.push(k);
                if ctx.folios_to_evict.len() > EVICT_CTX_MAX {
                    break;
                }
            }
            Ok(())
        })
    }

    fn admit_folio(&mut self, folio: Folio) -> Result<bool, String> {
        Python::attach(|py| {
            let r = self.obj.call_method1(py, "admit_folio", (folio,)).map_err(|e| describe(py, e))?;
            r.bind(py).is_truthy().map_err(|e| describe(py, e))
        })
        .map_err(|e| format!("folio {folio}: {e}"))
    }

    fn has_admit_folio(&self) -> bool {
        self.admit
    }

    fn has_folio_accessed(&self) -> bool {
        self.accessed
    }

    fn events(&mut self, events: &[Event]) -> Result<(), String> {
        self.bytes.clear();
        for e in events {
            self.bytes.extend_from_slice(&e.0.to_le_bytes());
        }
        Python::attach(|py| {
            let b = PyBytes::new(py, &self.bytes);
            self.obj.call_method1(py, "_events", (b,)).map(|_| ()).map_err(|e| describe(py, e))
        })
    }
}

/// The engine's factory over `attach(memcg, node) -> Policy`: one instance per lruvec.
pub fn factory(attach: Py<PyAny>) -> OpsFactory {
    Box::new(move |info: &LruvecInfo| {
        Python::attach(|py| {
            let obj = attach.call1(py, (info.memcg.as_str(), info.node)).map_err(|e| describe(py, e))?;
            let flag = |name: &str| obj.getattr(py, name).and_then(|a| a.extract::<bool>(py)).map_err(|e| describe(py, e));
            let (admit, accessed) = (flag("_has_admit_folio")?, flag("_has_folio_accessed")?);
            Ok(Box::new(PyOps { obj, admit, accessed, bytes: Vec::new() }) as Box<dyn CacheExtOps>)
        })
    })
}

/// The engine's factory for policy `name` of the shared library at `path`.
pub fn dylib_factory(path: &str, name: &str) -> Result<OpsFactory, String> {
    use reclaimlab_core::policy::ext::abi;
    use std::collections::HashMap;
    use std::ffi::{CStr, CString};
    use std::sync::Mutex;

    /// Libraries opened so far (never closed: a run's policy states live in them).
    static OPEN: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);
    let mut open = OPEN.lock().map_err(|_| "library table poisoned".to_string())?;
    let table = match open.get_or_insert_with(HashMap::new).get(path) {
        Some(&t) => t,
        None => {
            let c = CString::new(path).map_err(|_| "the path holds a NUL byte".to_string())?;
            let dlerror = || {
                // SAFETY: dlerror returns null or a NUL-terminated string.
                let e = unsafe { libc::dlerror() };
                if e.is_null() {
                    "unknown error".to_string()
                } else {
                    unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
                }
            };
            // SAFETY: loading a library runs its initialisers: the user named it.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if h.is_null() {
                return Err(format!("cannot load {path}: {}", dlerror()));
            }
            // SAFETY: `h` is a live handle; the symbol name is NUL-terminated.
            let sym = unsafe { libc::dlsym(h, abi::SYMBOL.as_ptr() as *const libc::c_char) };
            if sym.is_null() {
                return Err(format!("{path} exports no reclaimlab_policy_v1 (build it with reclaimlab_core::export_cache_ext_policies!)"));
            }
            // SAFETY: the symbol is the exported `extern "C" fn() -> *const PolicyV1`.
            let f: extern "C" fn() -> *const abi::PolicyV1 = unsafe { std::mem::transmute(sym) };
            let t = f();
            // SAFETY: the exported table; quiet_panics only of a table of this ABI version.
            if t.is_null() {
                return Err(format!("{path}: reclaimlab_policy_v1 returned no table"));
            }
            if unsafe { (*t).abi } == abi::ABI_VERSION {
                (unsafe { &*t }.quiet_panics)();
            }
            let t = t as usize;
            open.as_mut().unwrap().insert(path.to_string(), t);
            t
        }
    };
    // SAFETY: the library stays loaded (never closed).
    unsafe { abi::factory(table as *const abi::PolicyV1, name) }
}
