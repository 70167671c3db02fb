//! Trace errors: every one names the input and, where it applies, the record or line.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be opened/read.
    Io(std::io::Error),
    /// Not a trace of the expected format (bad magic, unknown version, bad header).
    BadHeader(String),
    /// The input ends before the header promised (record index where it ended).
    Truncated { record: u64 },
    /// A block whose checksum does not match, or a record with invalid fields.
    Corrupt { record: u64, what: String },
    /// A text line that does not parse (1-based line number).
    Parse { line: u64, what: String },
    /// A generator or converter given impossible parameters.
    InvalidArgument(String),
}

#[derive(Debug)]
pub struct Error {
    pub path: Option<PathBuf>,
    pub kind: ErrorKind,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    #[cold]
    pub fn new(path: Option<PathBuf>, kind: ErrorKind) -> Self {
        Error { path, kind }
    }
    #[cold]
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error { path: None, kind: ErrorKind::InvalidArgument(msg.into()) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}: ", p.display())?;
        }
        match &self.kind {
            ErrorKind::Io(e) => write!(f, "{e}"),
            ErrorKind::BadHeader(s) => write!(f, "not a valid trace: {s}"),
            ErrorKind::Truncated { record } => write!(f, "trace is truncated: input ends at record {record}"),
            ErrorKind::Corrupt { record, what } => write!(f, "trace is corrupt at record {record}: {what}"),
            ErrorKind::Parse { line, what } => write!(f, "line {line}: {what}"),
            ErrorKind::InvalidArgument(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}
