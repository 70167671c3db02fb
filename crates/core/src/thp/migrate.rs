//! Page migration (mm/migrate.c `migrate_pages` → `migrate_folio_move`): the page in one
//! frame moves to another. Its owner (page id, memcg), its flags (LRU state, young/dirty,
//! the policy's private bits) and its place on the LRU list go to the new frame, its PTE
//! (`pages.pte`) is rewritten (`remove_migration_ptes`), and the old frame is freed.

use crate::mm::page::NO_PAGE;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;

/// Move the folio in `src` to the isolated free frame `dst` of the same node (compaction
/// never leaves its zone, so the lruvec and the LRU sizes do not change).
pub fn migrate_folio(mm: &mut Mm, src: Pfn, dst: Pfn) {
    debug_assert_eq!(mm.node_of(src), mm.node_of(dst));
    let (page, flags) = (mm.frames.page(src), mm.frames.flags(src));
    if page == NO_PAGE {
        // A frame of a THP whose own page was unmapped: the folio's memcg and flags, no page.
        mm.frames.install(dst, 0, mm.frames.memcg(src), flags);
        mm.frames.zap_owner(dst);
    } else {
        mm.frames.install(dst, page, mm.frames.memcg(src), flags);
    }
    if mm.lists.is_linked(src) {
        mm.lists.replace(src, dst);
    }
    if page != NO_PAGE {
        mm.pages.pte[page as usize] = dst;
    }
    mm.free_frame(src);
}
