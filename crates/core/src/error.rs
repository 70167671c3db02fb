//! Engine errors. Every error names what was wrong (config key, trace file and
//! record, the cgroup that ran out of memory); the CLI prints it and exits 2.

use std::fmt;

#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A config key that does not exist, or a value it cannot take.
    Config { key: String, msg: String },
    /// A trace that cannot be read (file/record named inside).
    Trace(reclaimlab_trace::Error),
    /// The modeled kernel would OOM-kill: reclaim cannot make room.
    OutOfMemory(String),
    /// An unknown policy / scenario name or similar.
    Invalid(String),
}

#[derive(Debug)]
pub struct Error {
    pub kind: ErrorKind,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    #[cold]
    pub fn config(key: impl Into<String>, msg: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Config { key: key.into(), msg: msg.into() } }
    }
    #[cold]
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Invalid(msg.into()) }
    }
    #[cold]
    pub fn oom(msg: impl Into<String>) -> Self {
        Error { kind: ErrorKind::OutOfMemory(msg.into()) }
    }
}

impl From<reclaimlab_trace::Error> for Error {
    #[cold]
    fn from(e: reclaimlab_trace::Error) -> Self {
        Error { kind: ErrorKind::Trace(e) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Config { key, msg } => write!(f, "config key '{key}': {msg}"),
            ErrorKind::Trace(e) => write!(f, "{e}"),
            ErrorKind::OutOfMemory(s) => write!(f, "out of memory: {s}"),
            ErrorKind::Invalid(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for Error {}

/// Early return with an error unless a condition holds (config validation).
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $err:expr) => {
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        if !$cond {
            return Err($err);
        }
    };
}
