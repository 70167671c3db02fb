//! Engine errors → the Python exceptions defined in `reclaimlab.exceptions`.
//!
//! The exception classes live in Python (so users can import and catch them without the
//! extension); this is the one place that maps an error kind to its class.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use reclaimlab_core::{Error, ErrorKind};

/// Build the `reclaimlab.exceptions.<class_name>` exception with `msg` and extra attributes.
fn raise(py: Python<'_>, class_name: &str, msg: String, attrs: &[(&str, &str)]) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let cls = PyModule::import(py, "reclaimlab.exceptions")?.getattr(class_name)?;
        let kwargs = PyDict::new(py);
        for (k, v) in attrs {
            kwargs.set_item(*k, *v)?;
        }
        Ok(PyErr::from_value(cls.call((msg.clone(),), Some(&kwargs))?))
    };
    make().unwrap_or_else(|e| e)
}

/// Map a core error to its Python exception.
pub fn core_err(e: Error) -> PyErr {
    Python::attach(|py| {
        let msg = e.to_string();
        match &e.kind {
            ErrorKind::Config { key, .. } => raise(py, "ConfigError", msg, &[("key", key)]),
            ErrorKind::Trace(_) => raise(py, "TraceError", msg, &[]),
            ErrorKind::OutOfMemory(_) => raise(py, "OutOfMemoryError", msg, &[]),
            _ => raise(py, "ReclaimlabError", msg, &[]),
        }
    })
}

/// Map a trace error to `TraceError`.
pub fn trace_err(e: reclaimlab_trace::Error) -> PyErr {
    Python::attach(|py| raise(py, "TraceError", e.to_string(), &[]))
}

/// A bad argument that is the user's input (unknown scenario, access kind...).
/// A `ConfigError` about `key` raised on the Python side (a value of the wrong type).
pub fn config_invalid(key: &str, msg: impl Into<String>) -> PyErr {
    Python::attach(|py| raise(py, "ConfigError", msg.into(), &[("key", key)]))
}

pub fn invalid(msg: impl Into<String>) -> PyErr {
    Python::attach(|py| raise(py, "ReclaimlabError", msg.into(), &[]))
}
