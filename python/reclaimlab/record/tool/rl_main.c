/* reclaimlab-record: a Valgrind tool that writes a program's page accesses.

   Every guest load and store is folded to its 4 KiB page and classified through
   Valgrind's address-space manager: file-mapped (file identity + page offset; shared
   libraries included; a store to a MAP_PRIVATE file page makes it anonymous, as
   copy-on-write does) or anonymous (its own address space).  Instruction fetches are
   recorded by code page.  Repeats of a page among the last --rl-fold records are
   folded.  File I/O system calls become page-cache accesses of the file pages they
   cover, in program order.  An munmap frees the anonymous pages it unmaps (FREE chunks,
   replayed as MADV_DONTNEED).  Time is the number of guest instructions executed.

   Output: chunks of at most PIPE_BUF bytes (so writes from concurrent processes into one
   FIFO never interleave), each `u16 type, u16 payload bytes, u32 pid` + payload.  Page
   ids in access records are local to one process image; PAGE chunks define them, FILE
   chunks define the file slots they refer to.  python/reclaimlab/record/stream.py reads
   this stream and documents each chunk type. */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

/* Not in the tool headers, but part of the core every tool links: move an fd above the
   client's range (where the client cannot close it) with close-on-exec set. */
extern Int VG_(safe_fd)(Int oldfd);

enum { T_ACCESS = 1, T_PAGES = 2, T_FILE = 3, T_START = 4, T_FORK = 5, T_ADVICE = 6, T_STATS = 7, T_FREE = 8 };
enum { F_WRITE = 1, F_FILE = 2, F_SYSCALL = 4, F_READ_CONT = 8 };
enum { K_ANON = 1, K_FILE_SHARED, K_FILE_PRIVATE };

#define CHUNK_MAX 4096
#define HDR 8
#define NO_ID 0xFFFFFFFFu

/* ------------------------------------------------------------------ output */

static const HChar* clo_out = NULL;
static Int out_fd = -1;
static Int my_pid;

typedef struct { UChar b[CHUNK_MAX]; UInt len; UShort type; } Chunk;
static Chunk acc = { .type = T_ACCESS };
static Chunk defs = { .type = T_PAGES };

static void write_chunk(UShort type, const void* payload, UInt n)
{
   UChar b[CHUNK_MAX];
   tl_assert(n + HDR <= CHUNK_MAX);
   *(UShort*)b = type;
   *(UShort*)(b + 2) = (UShort)n;
   *(UInt*)(b + 4) = (UInt)my_pid;
   VG_(memcpy)(b + HDR, payload, n);
   if (out_fd >= 0 && VG_(write)(out_fd, b, n + HDR) != (Int)(n + HDR)) {
      VG_(umsg)("reclaimlab-record: writing the access stream failed; stopping\n");
      VG_(exit)(1);
   }
}

static void flush(Chunk* c)
{
   if (c->len == 0) return;
   write_chunk(c->type, c->b, c->len);
   c->len = 0;
}

/* Definitions always go out before the accesses that use them, so any prefix of the
   stream is self-contained. */
static void flush_all(void) { flush(&defs); flush(&acc); }

/* ------------------------------------------------------------ time & stats */

static ULong icount;        /* guest instructions executed (all threads) */
static ULong icount_last;   /* ... when the last record was emitted */
static ULong nr_refs;       /* loads + stores + code-page changes seen, before folding */
static ULong nr_records;

static void emit(UInt id, UChar flags)
{
   ULong gap = icount - icount_last;
   icount_last = icount;
   if (acc.len + 12 > CHUNK_MAX - HDR) flush_all();
   UChar* r = acc.b + acc.len;
   *(UInt*)r = id;
   r[4] = flags;
   r[5] = 0;
   *(UShort*)(r + 6) = 0;
   *(UInt*)(r + 8) = gap > 0xFFFFFFFFull ? 0xFFFFFFFFu : (UInt)gap;
   acc.len += 12;
   nr_records++;
}

/* ------------------------------------------------- open-addressing tables */

/* Key (k1, k2) -> UInt value; k1 == ~0 marks an empty slot. */
typedef struct { ULong k1, k2; UInt v; } Ent;
typedef struct { Ent* e; ULong cap, n; } Tab;

static ULong mix(ULong a, ULong b)
{
   ULong h = (a ^ (b * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
   return h ^ (h >> 31);
}

static void tab_init(Tab* t, ULong cap)
{
   t->cap = cap;
   t->n = 0;
   t->e = VG_(malloc)("rl.tab", cap * sizeof(Ent));
   for (ULong i = 0; i < cap; i++) t->e[i].k1 = ~0ull;
}

static Ent* tab_slot(const Tab* t, ULong k1, ULong k2)
{
   ULong i = mix(k1, k2) & (t->cap - 1);
   while (t->e[i].k1 != ~0ull && (t->e[i].k1 != k1 || t->e[i].k2 != k2))
      i = (i + 1) & (t->cap - 1);
   return &t->e[i];
}

static Ent* tab_find(const Tab* t, ULong k1, ULong k2)
{
   Ent* e = tab_slot(t, k1, k2);
   return e->k1 == ~0ull ? NULL : e;
}

static void tab_put(Tab* t, ULong k1, ULong k2, UInt v)
{
   if (2 * (t->n + 1) > t->cap) {
      Tab old = *t;
      tab_init(t, old.cap * 2);
      for (ULong i = 0; i < old.cap; i++)
         if (old.e[i].k1 != ~0ull) { *tab_slot(t, old.e[i].k1, old.e[i].k2) = old.e[i]; t->n++; }
      VG_(free)(old.e);
   }
   Ent* e = tab_slot(t, k1, k2);
   if (e->k1 == ~0ull) { t->n++; e->k1 = k1; e->k2 = k2; }
   e->v = v;
}

/* ------------------------------------------------------------ identities */

static Tab files;      /* (dev, ino) -> file slot */
static UInt nr_slots;
static Tab fpages;     /* (slot, page offset) -> local id */
static Tab anon;       /* virtual page -> local id of the anonymous page at that address */
static Tab cowed;      /* virtual page -> 1 while a private file page there has been copied */
static UInt nr_local;  /* local page ids handed out */

/* Define a new local page: anonymous (slot NO_ID) or a file page. */
static UInt new_page(UInt slot, UInt off)
{
   if (defs.len == 0) { *(UInt*)defs.b = nr_local; defs.len = 4; }
   *(UInt*)(defs.b + defs.len) = slot;
   *(UInt*)(defs.b + defs.len + 4) = off;
   defs.len += 8;
   if (defs.len + 8 > CHUNK_MAX - HDR) flush(&defs);
   return nr_local++;
}

/* The slot of file (dev, ino); `fresh` starts a new identity (the file was found empty
   or truncated to zero, so no page of an earlier file with that inode survives). */
static UInt file_slot(ULong dev, ULong ino, Long size, const HChar* name, Bool fresh)
{
   Ent* e = tab_find(&files, dev, ino);
   if (e && !fresh) return e->v;
   UInt slot = nr_slots++;
   tab_put(&files, dev, ino, slot);
   UChar b[CHUNK_MAX - HDR];
   UInt n = VG_(strlen)(name);
   if (n > sizeof b - 32) n = sizeof b - 32;
   *(UInt*)b = slot;
   *(UInt*)(b + 4) = fresh;
   *(ULong*)(b + 8) = dev;
   *(ULong*)(b + 16) = ino;
   *(ULong*)(b + 24) = size < 0 ? 0 : (ULong)size;
   VG_(memcpy)(b + 32, name, n);
   flush(&defs);   /* page definitions already buffered come first */
   write_chunk(T_FILE, b, 32 + n);
   return slot;
}

static UInt file_page(UInt slot, ULong off)
{
   Ent* e = tab_find(&fpages, slot, off);
   if (e) return e->v;
   UInt id = new_page(slot, (UInt)off);
   tab_put(&fpages, slot, off, id);
   return id;
}

static UInt anon_page(Addr vpage)
{
   Ent* e = tab_find(&anon, vpage, 0);
   if (e && e->v != NO_ID) return e->v;
   UInt id = new_page(NO_ID, 0);
   tab_put(&anon, vpage, 0, id);
   return id;
}

/* Shared file mappings (MAP_SHARED), from mmap's flags; a store to any other file
   mapping is a copy-on-write. */
typedef struct { Addr start, end; } Range;
static Range* shared;
static UInt nr_shared, cap_shared;

static Bool is_shared(Addr a)
{
   for (UInt i = 0; i < nr_shared; i++)
      if (a >= shared[i].start && a < shared[i].end) return True;
   return False;
}

static void unshare(Addr a, SizeT len)
{
   Addr end = a + len;
   for (UInt i = 0; i < nr_shared; ) {
      Range r = shared[i];
      if (r.end <= a || r.start >= end) { i++; continue; }
      shared[i] = shared[--nr_shared];
      if (r.start < a) { shared[nr_shared++] = (Range){ r.start, a }; }
      if (r.end > end) {
         if (nr_shared == cap_shared) {
            cap_shared = cap_shared ? 2 * cap_shared : 16;
            shared = VG_(realloc)("rl.shared", shared, cap_shared * sizeof(Range));
         }
         shared[nr_shared++] = (Range){ end, r.end };
      }
   }
}

static void add_shared(Addr a, SizeT len)
{
   unshare(a, len);
   if (nr_shared == cap_shared) {
      cap_shared = cap_shared ? 2 * cap_shared : 16;
      shared = VG_(realloc)("rl.shared", shared, cap_shared * sizeof(Range));
   }
   shared[nr_shared++] = (Range){ a, a + len };
}

/* Direct-mapped cache of resolved virtual pages; flushed whenever a mapping changes. */
#define TLB_BITS 14
typedef struct { Addr vpage; UInt id; UChar kind; } Tlb;
static Tlb tlb[1 << TLB_BITS];

static void tlb_flush(void)
{
   for (UInt i = 0; i < (1u << TLB_BITS); i++) tlb[i].vpage = ~(Addr)0;
}

static Tlb* resolve(Addr vpage)
{
   Tlb* t = &tlb[vpage & ((1u << TLB_BITS) - 1)];
   if (t->vpage == vpage) return t;
   Addr a = vpage << 12;
   NSegment const* seg = VG_(am_find_nsegment)(a);
   t->vpage = vpage;
   if (seg && seg->kind == SkFileC) {
      const HChar* name = VG_(am_get_filename)(seg);
      UInt slot = file_slot(seg->dev, seg->ino, -1, name ? name : "?", False);
      Ent* c = tab_find(&cowed, vpage, 0);
      if (c && c->v) {
         t->id = anon_page(vpage);
         t->kind = K_ANON;
         return t;
      }
      t->id = file_page(slot, (ULong)(seg->offset + (a - seg->start)) >> 12);
      t->kind = is_shared(a) ? K_FILE_SHARED : K_FILE_PRIVATE;
   } else {
      t->id = anon_page(vpage);
      t->kind = K_ANON;
   }
   return t;
}

/* --------------------------------------------------------- memory accesses */

/* Folding: a data access is dropped when its page is the page of one of the last
   `clo_fold` data or syscall records (a write only if that record was a write); syscall
   records enter that window as entries no page matches.  An instruction fetch is
   dropped when its page is that of one of the last `clo_fold` instruction-fetch records.
   With --rl-fold=1 only consecutive repeats of one page are folded. */
#define FOLD_MAX 64
static Int clo_fold = 16;
static struct { Addr vpage; Bool write; } window[FOLD_MAX];
static Int window_next;
static Addr code_window[FOLD_MAX];   /* pages of the last instruction-fetch records */
static Int code_next;

static void window_push(Addr vpage, Bool write)
{
   window[window_next].vpage = vpage;
   window[window_next].write = write;
   if (++window_next == clo_fold) window_next = 0;
}

static void data_access(Addr vpage, Bool write)
{
   nr_refs++;
   for (Int n = 0, i = window_next; n < clo_fold; n++) {   /* newest first: most hits are */
      i = i == 0 ? clo_fold - 1 : i - 1;
      if (window[i].vpage == vpage && (!write || window[i].write)) return;   /* folded */
   }
   Tlb* t = resolve(vpage);
   if (write && t->kind == K_FILE_PRIVATE) {   /* copy-on-write */
      t->id = anon_page(vpage);
      t->kind = K_ANON;
      tab_put(&cowed, vpage, 0, 1);
   }
   emit(t->id, (t->kind == K_ANON ? 0 : F_FILE) | (write ? F_WRITE : 0));
   window_push(vpage, write);
}

static VG_REGPARM(3) void rl_load(Addr a, UWord size, UWord ninstr)
{
   icount += ninstr;
   data_access(a >> 12, False);
   if (((a + size - 1) >> 12) != (a >> 12)) data_access((a + size - 1) >> 12, False);
}

static VG_REGPARM(3) void rl_store(Addr a, UWord size, UWord ninstr)
{
   icount += ninstr;
   data_access(a >> 12, True);
   if (((a + size - 1) >> 12) != (a >> 12)) data_access((a + size - 1) >> 12, True);
}

static VG_REGPARM(2) void rl_code(Addr a, UWord ninstr)
{
   icount += ninstr;
   nr_refs++;
   Addr vpage = a >> 12;
   for (Int n = 0, i = code_next; n < clo_fold; n++) {
      i = i == 0 ? clo_fold - 1 : i - 1;
      if (code_window[i] == vpage) return;   /* folded */
   }
   Tlb* t = resolve(vpage);
   emit(t->id, t->kind == K_ANON ? 0 : F_FILE);
   code_window[code_next] = vpage;
   if (++code_next == clo_fold) code_next = 0;
}

/* ------------------------------------------------------------ instrumenting */

static void add_call(IRSB* sb, const HChar* name, void* fn, Int regparms, IRExpr** args, IRExpr* guard)
{
   IRDirty* di = unsafeIRDirty_0_N(regparms, name, VG_(fnptr_to_fnentry)(fn), args);
   if (guard) di->guard = guard;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static void add_mem(IRSB* sb, IRExpr* addr, Int size, Bool write, UInt* pending, IRExpr* guard)
{
   /* A guarded call may not run, so it adds no instructions: they are counted at the
      next unguarded call or superblock exit. */
   IRExpr** args = mkIRExprVec_3(addr, mkIRExpr_HWord(size), mkIRExpr_HWord(guard ? 0 : *pending));
   if (write) add_call(sb, "rl_store", rl_store, 3, args, guard);
   else       add_call(sb, "rl_load", rl_load, 3, args, guard);
   if (!guard) *pending = 0;
}

/* icount += pending, in IR (no call), before an exit of the superblock. */
static void add_count(IRSB* sb, UInt* pending)
{
   if (*pending == 0) return;
   IRTemp t1 = newIRTemp(sb->tyenv, Ity_I64), t2 = newIRTemp(sb->tyenv, Ity_I64);
   IRExpr* where = mkIRExpr_HWord((HWord)&icount);
   addStmtToIRSB(sb, IRStmt_WrTmp(t1, IRExpr_Load(Iend_LE, Ity_I64, where)));
   addStmtToIRSB(sb, IRStmt_WrTmp(t2, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(t1), IRExpr_Const(IRConst_U64(*pending)))));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, where, IRExpr_RdTmp(t2)));
   *pending = 0;
}

static IRSB* rl_instrument(VgCallbackClosure* closure, IRSB* in, const VexGuestLayout* layout,
                           const VexGuestExtents* vge, const VexArchInfo* archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
   IRSB* sb = deepCopyIRSBExceptStmts(in);
   UInt pending = 0;
   Addr code_page = ~(Addr)0;
   Int i = 0;
   for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; i++)
      addStmtToIRSB(sb, in->stmts[i]);
   for (; i < in->stmts_used; i++) {
      IRStmt* st = in->stmts[i];
      if (!st || st->tag == Ist_NoOp) continue;
      switch (st->tag) {
      case Ist_IMark: {
         pending++;
         Addr first = st->Ist.IMark.addr >> 12, last = (st->Ist.IMark.addr + st->Ist.IMark.len - 1) >> 12;
         if (first != code_page || last != code_page) {
            add_call(sb, "rl_code", rl_code, 2,
                     mkIRExprVec_2(mkIRExpr_HWord(st->Ist.IMark.addr), mkIRExpr_HWord(pending)), NULL);
            pending = 0;
            if (last != first)
               add_call(sb, "rl_code", rl_code, 2,
                        mkIRExprVec_2(mkIRExpr_HWord(last << 12), mkIRExpr_HWord(0)), NULL);
            code_page = last;
         }
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_WrTmp:
         if (st->Ist.WrTmp.data->tag == Iex_Load) {
            IRExpr* ld = st->Ist.WrTmp.data;
            add_mem(sb, ld->Iex.Load.addr, sizeofIRType(ld->Iex.Load.ty), False, &pending, NULL);
         }
         addStmtToIRSB(sb, st);
         break;
      case Ist_Store:
         add_mem(sb, st->Ist.Store.addr, sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.Store.data)),
                 True, &pending, NULL);
         addStmtToIRSB(sb, st);
         break;
      case Ist_StoreG: {
         IRStoreG* sg = st->Ist.StoreG.details;
         add_mem(sb, sg->addr, sizeofIRType(typeOfIRExpr(in->tyenv, sg->data)), True, &pending, sg->guard);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_LoadG: {
         IRLoadG* lg = st->Ist.LoadG.details;
         IRType ty = Ity_INVALID, ty_wide = Ity_INVALID;
         typeOfIRLoadGOp(lg->cvt, &ty_wide, &ty);
         add_mem(sb, lg->addr, sizeofIRType(ty), False, &pending, lg->guard);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_Dirty: {
         IRDirty* d = st->Ist.Dirty.details;
         if (d->mFx != Ifx_None) {
            tl_assert(d->mAddr && d->mSize != 0);
            add_mem(sb, d->mAddr, d->mSize, d->mFx != Ifx_Read, &pending, NULL);
         }
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_CAS: {
         /* Read and written in one instruction: recorded as a write. */
         IRCAS* cas = st->Ist.CAS.details;
         Int size = sizeofIRType(typeOfIRExpr(in->tyenv, cas->dataLo)) * (cas->dataHi ? 2 : 1);
         add_mem(sb, cas->addr, size, True, &pending, NULL);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_LLSC: {
         IRType ty = st->Ist.LLSC.storedata ? typeOfIRExpr(in->tyenv, st->Ist.LLSC.storedata)
                                            : typeOfIRTemp(in->tyenv, st->Ist.LLSC.result);
         add_mem(sb, st->Ist.LLSC.addr, sizeofIRType(ty), st->Ist.LLSC.storedata != NULL, &pending, NULL);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_Exit:
         add_count(sb, &pending);
         addStmtToIRSB(sb, st);
         break;
      default:
         addStmtToIRSB(sb, st);
         break;
      }
   }
   add_count(sb, &pending);
   return sb;
}

/* ----------------------------------------------------------------- syscalls */

/* The regular file open as `fd`: its slot, or NO_ID (pipes, sockets, devices, and
   /proc or /sys files, which are not in the page cache).  `fresh` starts a new
   identity; FRESH_IF_EMPTY does so for a file found empty (just created or opened with
   O_TRUNC), whose inode number may be an old file's. */
enum { LOOKUP, FRESH_IF_EMPTY, FRESH };
static UInt fd_slot(Int fd, Int fresh)
{
   struct vg_stat st;
   if (fd < 0 || VG_(fstat)(fd, &st) != 0 || !VKI_S_ISREG(st.mode)) return NO_ID;
   HChar path[64], name[4096];
   VG_(sprintf)(path, "/proc/self/fd/%d", fd);
   SSizeT n = VG_(readlink)(path, name, sizeof name - 1);
   name[n > 0 ? n : 0] = 0;
   if (VG_(strncmp)(name, "/proc/", 6) == 0 || VG_(strncmp)(name, "/sys/", 5) == 0) return NO_ID;
   return file_slot(st.dev, st.ino, st.size, n > 0 ? name : "?",
                    fresh == FRESH || (fresh == FRESH_IF_EMPTY && st.size == 0));
}

/* The page-cache accesses of `len` bytes at `off` of fd's file. */
static void file_io(Int fd, Long off, Long len, Bool write)
{
   if (len <= 0 || off < 0) return;
   UInt slot = fd_slot(fd, LOOKUP);
   if (slot == NO_ID) return;
   for (ULong p = (ULong)off >> 12; p <= (ULong)(off + len - 1) >> 12; p++) {
      nr_refs++;
      emit(file_page(slot, p),
           F_FILE | F_SYSCALL | (write ? F_WRITE : 0) | (p != (ULong)off >> 12 ? F_READ_CONT : 0));
      window_push(~(Addr)0, False);
   }
}

/* File position after a read()/write() that moved it by `res`: where the call began. */
static Long began_at(Int fd, Long res)
{
   Off64T pos = VG_(lseek)(fd, 0, VKI_SEEK_CUR);
   return pos < 0 ? -1 : pos - res;
}

/* Offsets read in the pre-syscall hook (sendfile, copy_file_range), per thread (a
   thread id beyond MAX_TID, past Valgrind's default --max-threads, records none). */
#define MAX_TID 4096
static Long saved_off[2][MAX_TID];

static Long guest_off(UWord ptr)
{
   if (!ptr || !VG_(am_is_valid_for_client)(ptr, sizeof(Long), VKI_PROT_READ)) return -1;
   return *(Long*)ptr;
}

static void stats(void);

static void rl_pre_syscall(ThreadId tid, UInt no, UWord* args, UInt nargs)
{
   switch (no) {
   case __NR_execve:
   case __NR_execveat:
      stats();
      break;
   case __NR_sendfile:
      if (tid >= MAX_TID) break;
      saved_off[0][tid] = guest_off(args[2]);
      break;
   case __NR_copy_file_range:
      if (tid >= MAX_TID) break;
      saved_off[0][tid] = guest_off(args[1]);
      saved_off[1][tid] = guest_off(args[3]);
      break;
   default:
      break;
   }
}

static void rl_post_syscall(ThreadId tid, UInt no, UWord* args, UInt nargs, SysRes res)
{
   if (sr_isError(res)) return;
   Long r = (Long)sr_Res(res);
   Int fd = (Int)args[0];
   switch (no) {
   case __NR_read: case __NR_readv:
      file_io(fd, began_at(fd, r), r, False);
      break;
   case __NR_write: case __NR_writev:
      file_io(fd, began_at(fd, r), r, True);
      break;
   case __NR_pread64:
      file_io(fd, (Long)args[3], r, False);
      break;
   case __NR_preadv: case __NR_preadv2:
      file_io(fd, (Long)args[3] == -1 ? began_at(fd, r) : (Long)args[3], r, False);
      break;
   case __NR_pwrite64:
      file_io(fd, (Long)args[3], r, True);
      break;
   case __NR_pwritev: case __NR_pwritev2:
      file_io(fd, (Long)args[3] == -1 ? began_at(fd, r) : (Long)args[3], r, True);
      break;
   case __NR_sendfile: {   /* (out_fd, in_fd, *offset, count) */
      Int in = (Int)args[1];
      file_io(in, args[2] ? (tid < MAX_TID ? saved_off[0][tid] : -1) : began_at(in, r), r, False);
      file_io(fd, began_at(fd, r), r, True);
      break;
   }
   case __NR_copy_file_range: {   /* (fd_in, *off_in, fd_out, *off_out, len, flags) */
      Int out = (Int)args[2];
      Bool known = tid < MAX_TID;
      file_io(fd, args[1] ? (known ? saved_off[0][tid] : -1) : began_at(fd, r), r, False);
      file_io(out, args[3] ? (known ? saved_off[1][tid] : -1) : began_at(out, r), r, True);
      break;
   }
   case __NR_fadvise64:   /* (fd, offset, len, advice): whole-file normal/random/sequential */
      if (args[1] == 0 && args[2] == 0 && args[3] <= 2) {
         UInt slot = fd_slot(fd, LOOKUP);
         if (slot != NO_ID) {
            UInt b[2] = { slot, (UInt)args[3] };
            flush(&defs);
            write_chunk(T_ADVICE, b, sizeof b);
         }
      }
      break;
   case __NR_open: case __NR_creat: case __NR_openat:
      fd_slot((Int)r, FRESH_IF_EMPTY);
      break;
   case __NR_ftruncate:
      if (args[1] == 0) { fd_slot(fd, FRESH); tlb_flush(); }
      break;
   case __NR_truncate:
      if (args[1] == 0) {
         struct vg_stat st;
         if (!sr_isError(VG_(stat)((const HChar*)args[0], &st)) && VKI_S_ISREG(st.mode)) {
            file_slot(st.dev, st.ino, 0, (const HChar*)args[0], True);
            tlb_flush();
         }
      }
      break;
   case __NR_mmap:   /* (addr, len, prot, flags, fd, off) */
      if ((args[3] & VKI_MAP_SHARED) && !(args[3] & VKI_MAP_ANONYMOUS))
         add_shared((Addr)r, args[1]);
      break;
   default:
      break;
   }
}

/* ------------------------------------------------------------ mapping changes */

/* Anonymous pages keep their identity by address: a new mapping over an old address
   is the same simulated page (freed when it was unmapped, so touched again it is a new
   zero page, as in the kernel).  Private file pages mapped anew are the file's again until
   written. */
static void map_changed(Addr a, SizeT len)
{
   tlb_flush();
   if (cowed.n == 0) return;
   Addr first = a >> 12, last = (a + len - 1) >> 12;
   if (last - first < cowed.cap) {
      for (Addr p = first; p <= last; p++) {
         Ent* e = tab_find(&cowed, p, 0);
         if (e) e->v = 0;
      }
   } else {
      for (ULong i = 0; i < cowed.cap; i++)
         if (cowed.e[i].k1 != ~0ull && cowed.e[i].k1 >= first && cowed.e[i].k1 <= last) cowed.e[i].v = 0;
   }
}

/* Local ids below this may be a fork child's or parent's too (ids handed out before the
   last fork, in either process): unmapping them here does not free the other's copy, so
   they are not freed. */
static UInt shared_below;

/* munmap frees the anonymous pages of the range (zap_pte_range: the process's own pages
   go back to the allocator; mm/memory.c): a FREE chunk of their local ids, after every
   record before it, which the trace replays as MADV_DONTNEED of those pages.  Pages whose
   identity moved away with mremap (NO_ID) and pages possibly shared with a fork are
   left alone; a private file mapping's copied-on-write pages are anonymous and freed,
   its other pages stay in the page cache. */
static void free_anon(Addr a, SizeT len)
{
   if (anon.n == 0 || len == 0) return;
   UInt ids[(CHUNK_MAX - HDR) / 4];
   UInt n = 0;
   Addr first = a >> 12, last = (a + len - 1) >> 12;
   flush_all();
   for (Addr p = first; p <= last; p++) {
      Ent* e = tab_find(&anon, p, 0);
      if (!e || e->v == NO_ID || e->v < shared_below) continue;
      ids[n++] = e->v;
      if (n == sizeof ids / sizeof ids[0]) { write_chunk(T_FREE, ids, 4 * n); n = 0; }
   }
   if (n) write_chunk(T_FREE, ids, 4 * n);
}

static void rl_new_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di) { map_changed(a, len); }
static void rl_die_munmap(Addr a, SizeT len) { free_anon(a, len); unshare(a, len); map_changed(a, len); }
static void rl_remap(Addr from, Addr to, SizeT len)
{
   /* mremap moves the pages: their identities follow them, and the old addresses, which
      Valgrind then reports unmapped, hold none. */
   for (SizeT off = 0; off < len; off += 4096) {
      Ent* e = tab_find(&anon, (from + off) >> 12, 0);
      if (e && e->v != NO_ID) {
         UInt id = e->v;
         e->v = NO_ID;
         tab_put(&anon, (to + off) >> 12, 0, id);
      }
   }
   map_changed(to, len);
}

/* ----------------------------------------------------------------- lifecycle */

static void start(void)
{
   my_pid = VG_(getpid)();
   write_chunk(T_START, NULL, 0);
}

static void rl_pre_fork(ThreadId tid) { flush_all(); shared_below = nr_local; }

static void rl_child_fork(ThreadId tid)
{
   UInt b[3] = { (UInt)my_pid, nr_local, nr_slots };
   shared_below = nr_local;
   my_pid = VG_(getpid)();
   write_chunk(T_FORK, b, sizeof b);
}

static Bool rl_process_cmd_line_option(const HChar* arg)
{
   if VG_STR_CLO(arg, "--rl-out", clo_out) {}
   else if VG_BINT_CLO(arg, "--rl-fold", clo_fold, 1, FOLD_MAX) {}
   else return False;
   return True;
}

static void rl_print_usage(void)
{
   VG_(printf)("    --rl-out=<fifo>   where to write the access stream [required]\n");
   VG_(printf)("    --rl-fold=<1..64> fold an access to a page of the last N records [16]\n");
}

static void rl_print_debug_usage(void) {}

static void rl_post_clo_init(void)
{
   if (!clo_out) {
      VG_(fmsg)("reclaimlab-record: --rl-out=<fifo> is required\n");
      VG_(exit)(1);
   }
   SysRes r = VG_(open)(clo_out, VKI_O_WRONLY, 0);
   if (sr_isError(r)) {
      VG_(fmsg)("reclaimlab-record: cannot open %s\n", clo_out);
      VG_(exit)(1);
   }
   out_fd = VG_(safe_fd)((Int)sr_Res(r));
   tab_init(&files, 1024);
   tab_init(&fpages, 1 << 16);
   tab_init(&anon, 1 << 16);
   tab_init(&cowed, 1024);
   tlb_flush();
   for (Int i = 0; i < FOLD_MAX; i++) window[i].vpage = code_window[i] = ~(Addr)0;
   start();
}

/* The counters since the last STATS chunk (an exec'd image reports before it goes). */
static void stats(void)
{
   static ULong reported[3];
   ULong now[3] = { icount, nr_refs, nr_records };
   ULong b[3] = { now[0] - reported[0], now[1] - reported[1], now[2] - reported[2] };
   flush_all();
   write_chunk(T_STATS, b, sizeof b);
   VG_(memcpy)(reported, now, sizeof now);
}

static void rl_fini(Int exitcode) { stats(); }

static void rl_pre_clo_init(void)
{
   VG_(details_name)("reclaimlab-record");
   VG_(details_version)(NULL);
   VG_(details_description)("page-access recorder for reclaimlab");
   VG_(details_copyright_author)("reclaimlab contributors");
   VG_(details_bug_reports_to)("https://github.com/reclaimlab");
   VG_(details_avg_translation_sizeB)(200);
   VG_(basic_tool_funcs)(rl_post_clo_init, rl_instrument, rl_fini);
   VG_(needs_command_line_options)(rl_process_cmd_line_option, rl_print_usage, rl_print_debug_usage);
   VG_(needs_syscall_wrapper)(rl_pre_syscall, rl_post_syscall);
   VG_(track_new_mem_mmap)(rl_new_mmap);
   VG_(track_die_mem_munmap)(rl_die_munmap);
   VG_(track_copy_mem_remap)(rl_remap);
   VG_(atfork)(rl_pre_fork, NULL, rl_child_fork);
}

VG_DETERMINE_INTERFACE_VERSION(rl_pre_clo_init)
