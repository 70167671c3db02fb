//! The access record: one page access as the engine replays it.
//!
//! A record is 12 bytes in memory and names a *dense* page id (0..nr_pages), so the
//! engine indexes flat arrays by it with no hashing. Readers of foreign formats do the
//! remapping from addresses/block numbers once, at read time.

/// Page size the whole project assumes (x86-64 base page).
pub const PAGE_SIZE: u64 = 4096;
/// `PAGE_SHIFT` as in the kernel.
pub const PAGE_SHIFT: u32 = 12;

/// Bits of [`Access::flags`].
pub mod flags {
    /// The access writes the page (store / write()); it dirties the page.
    pub const WRITE: u8 = 1 << 0;
    /// The page is file-backed (page cache); otherwise anonymous (swap-backed).
    pub const FILE: u8 = 1 << 1;
    /// The access goes through read()/write() (`folio_mark_accessed` semantics);
    /// otherwise it is a load/store through a mapping (only the PTE young bit is set).
    pub const SYSCALL: u8 = 1 << 2;
    /// With SYSCALL: the record continues the previous record's system call, one page
    /// further into the same file (a read() of several pages is a run of records, the
    /// first without this bit). Readahead sizes its window from the whole request.
    pub const READ_CONT: u8 = 1 << 3;
    /// All bits a valid record may carry.
    pub const VALID: u8 = WRITE | FILE | SYSCALL | READ_CONT;
}

/// One page access.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Access {
    /// Dense page id, unique across the whole trace (all processes/cgroups).
    pub page: u32,
    /// Trace-local cgroup id; names are in [`crate::TraceMeta::cgroups`] (0 = root).
    pub cgroup: u16,
    /// [`flags`] bits.
    pub flags: u8,
    /// Time since the previous record, in ticks of [`crate::TraceMeta::tick_ps`];
    /// 0 when the trace carries no time (the engine then charges its per-access cost).
    pub gap: u32,
}

impl Access {
    #[inline(always)]
    pub fn is_write(&self) -> bool {
        self.flags & flags::WRITE != 0
    }
    #[inline(always)]
    pub fn is_file(&self) -> bool {
        self.flags & flags::FILE != 0
    }
    #[inline(always)]
    pub fn is_syscall(&self) -> bool {
        self.flags & flags::SYSCALL != 0
    }

    /// Pages of the read() this record starts or continues, from this record on: itself
    /// and the `READ_CONT` records right after it on the following pages (`rest`; a
    /// request cut at a batch boundary counts what the batch holds).
    pub fn request_pages(&self, rest: &[Access]) -> u64 {
        let mut next = self.page;
        1 + rest
            .iter()
            .take_while(|r| {
                next = next.wrapping_add(1);
                r.flags & flags::READ_CONT != 0 && r.page == next
            })
            .count() as u64
    }
}

/// How records of a foreign trace that lacks the information are classified
/// (e.g. LIRS block traces carry block numbers only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// Page-cache file page read via read() (block I/O traces).
    FileRead,
    /// Page-cache file page through mmap.
    FileMapped,
    /// Anonymous memory through a mapping (CPU address traces).
    AnonMapped,
}

impl AccessKind {
    pub fn flags(self) -> u8 {
        match self {
            AccessKind::FileRead => flags::FILE | flags::SYSCALL,
            AccessKind::FileMapped => flags::FILE,
            AccessKind::AnonMapped => 0,
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "file-read" => Some(AccessKind::FileRead),
            "file-mapped" => Some(AccessKind::FileMapped),
            "anon" | "anon-mapped" => Some(AccessKind::AnonMapped),
            _ => None,
        }
    }
}
