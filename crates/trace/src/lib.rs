//! reclaimlab-trace: page-access traces.
//!
//! - [`record`]: the 12-byte [`Access`] record the engine replays (dense page ids).
//! - [`source`]: the streaming [`AccessSource`] interface (batches, never the whole trace).
//! - [`error`]: errors naming the file and the record/line.

pub mod error;
pub mod record;
pub mod source;

pub use error::{Error, ErrorKind, Result};
pub use record::{flags, Access, AccessKind, PAGE_SHIFT, PAGE_SIZE};
pub use source::{AccessSource, TraceMeta};
