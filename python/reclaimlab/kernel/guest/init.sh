#!/bin/busybox sh
# /init of reclaimlab's guest (python/reclaimlab/kernel/initramfs.py packs it).
# Configures the machine from lab.* kernel parameters, makes the workload's cgroups as
# /data/cgroups lists them ("NAME MAX HIGH LOW MIN" per line, "-" for the root cgroup),
# runs /wl in them (or a real program, /data/program), prints "@@" lines on the serial console and powers off.
# "/init report WHEN" only prints the memory layout and the data disk's I/O statistics
# (wl runs it just before the workload).

# The memory layout, tagged WHEN (boot, start, end): per zone of /proc/zoneinfo one line
# "@@zone WHEN NODE ZONE free=.. min=.. low=.. high=.. spanned=.. present=.. managed=..
# protection=a,b,.." (pages), then "@@meminfo WHEN KEY KB", "@@min_free_kbytes WHEN N" and
# the slab caches that hold 8 pages or more (slabs); "report" adds the disk's statistics and
# the traces' (blkstat), which at the end are taken first, as the workload stops.
layout() {
    awk -v when="$1" '
        function flush() { if (zone != "") print "@@zone", when, node, zone, line }
        $1 == "Node" { flush(); node = $2; sub(/,/, "", node); zone = $4; line = "" }
        $1 == "pages" && $2 == "free" { line = line " free=" $3 }
        $1 ~ /^(min|low|high|spanned|present|managed)$/ && NF == 2 { line = line " " $1 "=" $2 }
        $1 == "protection:" { p = $0; sub(/.*\(/, "", p); sub(/\).*/, "", p); gsub(/ /, "", p); line = line " protection=" p }
        END { flush() }' /proc/zoneinfo
    grep -E '^(MemTotal|MemFree|MemAvailable|Cached|Shmem|Mlocked|Slab|SReclaimable|SUnreclaim|PageTables|KernelStack|AnonPages):' /proc/meminfo |
        while read -r k v u; do echo "@@meminfo $1 ${k%:} $v"; done
    echo "@@min_free_kbytes $1 $(cat /proc/sys/vm/min_free_kbytes)"
    slabs "$1"
    pagetypes "$1"
}
report() {
    layout "$1"
    blkstat "$1"
}
# The slab caches (/proc/slabinfo, mm/slab_common.c): "@@slab WHEN NAME ACTIVE_OBJS OBJSIZE
# OBJPERSLAB PAGESPERSLAB SLABS" for each cache whose slabs hold 8 pages or more; what the
# kernel's own allocations take from the free lists while the workload runs.
slabs() {
    [ -r /proc/slabinfo ] || return 0
    awk -v when="$1" 'NR > 2 && $15 * $6 >= 8 { print "@@slab", when, $1, $2, $4, $5, $6, $15 }' /proc/slabinfo
}
# The free lists by migrate type (/proc/pagetypeinfo): per zone and migrate type, free blocks
# per order 0..10, "@@freelist WHEN NODE ZONE TYPE N0 .. N10"; and the pageblocks per migrate
# type, "@@zoneblocks WHEN NODE ZONE UNMOVABLE MOVABLE RECLAIMABLE HIGHATOMIC ISOLATE" (guest/thp.c's
# @@pageblocks, for every workload). Which zones hold free pages of another type than Movable decides
# where the workload's allocations fall back (__rmqueue_fallback, mm/page_alloc.c 6.12).
pagetypes() {
    [ -r /proc/pagetypeinfo ] || return 0
    awk -v when="$1" '
        $1 == "Node" && $5 == "type" { n = $2; sub(/,/, "", n); z = $4; sub(/,/, "", z); t = $6
            if (NF == 17) { printf "@@freelist %s %s %s %s", when, n, z, t; for (i = 7; i <= 17; i++) printf " %s", $i; print "" } }
        $1 == "Number" { blocks = 1; next }
        $1 == "Free" { blocks = 0; next }
        blocks && $1 == "Node" && $5 != "type" && NF >= 9 { z = $4; n = $2; sub(/,/, "", n); printf "@@zoneblocks %s %s %s %s %s %s %s %s\n", when, n, z, $5, $6, $7, $8, $9 }' /proc/pagetypeinfo
}
# The data disk's I/O statistics (/sys/block/vda/stat: reads, merges, sectors, ms; the
# same for writes; in flight, busy ms, queue ms, ...): "@@blkstat WHEN FIELDS" at the
# workload's start and end, so validation can measure the guest disk's write time.
blkstat() {
    if [ -e /sys/block/vda/stat ]; then echo "@@blkstat $1 $(cat /sys/block/vda/stat)"; fi
    cpustat "$1"
    wake_trace "$1"
    sched_trace "$1"
}
# The events a tracefs instance's ring buffer dropped, over its CPUs.
overruns() {
    awk '/^overrun:/ { s += $2 } END { print s + 0 }' "$1"/per_cpu/cpu*/stats
}
# Who has kswapd's CPU: sched_switch events into and out of a kswapd thread, from the
# workload's start to its end, in a tracefs instance of their own (2 MiB a CPU). Per kswapd
# thread and CPU, "@@ksched COMM CPU RUNS RUN_US OUT_R OUT_S OUT_D IN_FROM_IDLE" (how often
# it ran, for how long in all, how its runs ended: preempted (R), asleep (S), waiting on
# I/O (D), and how many began on an idle CPU); "@@ksched_run COMM LOG2_US N" (the runs'
# lengths, power-of-two buckets of microseconds); "@@ksched_in COMM PREV_COMM PREV_STATE N"
# (what it took the CPU from: a task in state R was preempted by it); "@@ksched_out COMM
# NEXT_COMM N" (who took the CPU from a preempted kswapd, its whole name: a kworker's pool,
# "kworker/0:1H" a high-priority one such as kblockd's), and the work items kworkers ran,
# "@@hist workqueue_execute_start { function: NAME } hitcount: N"; "@@ksched_lost N".
# The workload's side (its task "wl", with sched_wakeup): "@@wsched_out STATE NEXT N" (how
# its runs ended and who ran next, NEXT a class: kswapd, kworker, idle, other) and "@@wwait
# PREV N WAIT_US MAX_US" (its waits from becoming runnable, woken or preempted, to running
# again, by who had the CPU at their end); "@@swcpu T_US COMM CPU" each time the workload or
# kswapd0 begins a run on another CPU than its last, their CPUs at the start ("@@migrate_cpu
# COMM CPU", /wl asks for the start report) and the workload's start and end on the same
# clock ("@@migrate_mark T_US start|end"; T_US: the trace clock). The two run apart: a woken
# kswapd is placed on the idle CPU (docs/validation.md, "Where the workload and kswapd run").
sched_trace() {
    S=/sys/kernel/tracing/instances/rl_sched
    case "$1" in
    start)
        [ -d /sys/kernel/tracing/events/sched/sched_switch ] || return 0
        mkdir -p $S 2>/dev/null || return 0
        echo 2048 > $S/buffer_size_kb
        echo 'prev_comm ~ "kswapd*" || next_comm ~ "kswapd*" || prev_comm == "wl" || next_comm == "wl"' \
            > $S/events/sched/sched_switch/filter || return 0
        echo 1 > $S/events/sched/sched_switch/enable
        echo 'comm == "wl"' > $S/events/sched/sched_wakeup/filter && echo 1 > $S/events/sched/sched_wakeup/enable
        # The work items kworkers ran meanwhile (what a kworker that preempted kswapd did).
        echo 'hist:keys=function.sym:vals=hitcount:sort=hitcount.descending' \
            > $S/events/workqueue/workqueue_execute_start/trigger 2>/dev/null
        echo "lab start" > $S/trace_marker
        for d in /proc/[0-9]*; do
            case "$(cat $d/comm 2>/dev/null)" in
                wl|kswapd0) echo "@@migrate_cpu $(cat $d/comm) $(awk '{ print $39 }' $d/stat)" ;;
            esac
        done ;;
    end)
        [ -e $S/events/sched/sched_switch/enable ] || return 0
        echo "lab end" > $S/trace_marker
        echo 0 > $S/events/sched/sched_switch/enable
        echo 0 > $S/events/sched/sched_wakeup/enable 2>/dev/null
        awk 'function kv(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
             function cls(t) { return t ~ /^kswapd/ ? "kswapd" : t ~ /^kworker/ ? "kworker" : t ~ /^swapper/ ? "idle" : "other" }
             { for (i = 2; i <= NF; i++) if ($i ~ /^(sched_switch|sched_wakeup|tracing_mark_write):$/) break
               if (i > NF) next
               ts = $(i - 1); sub(/:$/, "", ts); c = $(i - 3); gsub(/[][]/, "", c); c += 0
               if ($i == "tracing_mark_write:") { if ($(i + 1) == "lab") printf "@@migrate_mark %.0f %s\n", ts * 1e6, $(i + 2); next }
               if ($i == "sched_wakeup:") { if (!(wr > 0)) wr = ts; next }
               pc = kv("prev_comm"); nc = kv("next_comm"); st = substr(kv("prev_state"), 1, 1)
               if (pc == "wl") { wout[st, cls(nc)]++; if (st == "R") wr = ts }
               if ((nc == "wl" || nc == "kswapd0") && last[nc] != c "") { printf "@@swcpu %.0f %s %d\n", ts * 1e6, nc, c; last[nc] = c "" }
               if (nc == "wl" && wr > 0) { k = cls(pc); us = (ts - wr) * 1e6; wn[k]++; wsum[k] += us
                   if (us > wmax[k]) wmax[k] = us; wr = 0 }
               if (pc ~ /^kswapd/ && (pc SUBSEP c) in t0) {
                   k = pc SUBSEP c; us = (ts - t0[k]) * 1e6; runs[k]++; tot[k] += us; out[k, st]++
                   if (st == "R") to[pc, nc]++
                   b = 0; for (w = 2; w <= us; w *= 2) b++; hist[pc, b]++; delete t0[k] }
               if (nc ~ /^kswapd/) {
                   k = nc SUBSEP c; t0[k] = ts; seen[k] = 1; if (pc ~ /^swapper/) idle[k]++
                   else { sub(/\/.*/, "", pc); from[nc, pc, st]++ } } }
             END { for (k in seen) { split(k, a, SUBSEP)
                       printf "@@ksched %s %d %d %.0f %d %d %d %d\n", a[1], a[2], runs[k], tot[k], out[k, "R"], out[k, "S"], out[k, "D"], idle[k] }
                   for (k in hist) { split(k, a, SUBSEP); printf "@@ksched_run %s %d %d\n", a[1], a[2], hist[k] }
                   for (k in from) { split(k, a, SUBSEP); printf "@@ksched_in %s %s %s %d\n", a[1], a[2], a[3], from[k] }
                   for (k in to) { split(k, a, SUBSEP); printf "@@ksched_out %s %s %d\n", a[1], a[2], to[k] }
                   for (k in wout) { split(k, a, SUBSEP); printf "@@wsched_out %s %s %d\n", a[1], a[2], wout[k] }
                   for (k in wn) printf "@@wwait %s %d %.0f %.0f\n", k, wn[k], wsum[k], wmax[k] }' $S/trace
        grep '^{' $S/events/workqueue/workqueue_execute_start/hist 2>/dev/null | head -n 12 |
            sed 's/^/@@hist workqueue_execute_start /' | tr -s ' '
        echo "@@ksched_lost $(overruns $S)"
        rmdir $S 2>/dev/null ;;
    esac
}
# How long kswapd takes to start after an allocation wakes it: the vmscan tracepoints
# mm_vmscan_wakeup_kswapd (wakeup_kswapd, before wake_up_interruptible) and
# mm_vmscan_kswapd_wake (kswapd, before each balance_pgdat; mm/vmscan.c 6.12), enabled from
# the workload's start to its end in a tracefs instance of their own (DAMON's snapshots
# read the top-level buffer). kmem's mm_page_alloc (__alloc_pages, mm/page_alloc.c 6.12) is
# recorded only inside the windows: an enable_event trigger on mm_vmscan_wakeup_kswapd
# turns it on, a disable_event trigger on mm_vmscan_kswapd_wake off (no per-event work
# outside them); mm_vmscan_direct_reclaim_begin as well. Per pass that a wake-up started:
# "@@kswapd_wake LATENCY_US CALLS PAGES WAKER_PAGES STALLS" (from the first wakeup_kswapd
# after the previous pass to the pass's start, the wakeup_kswapd calls in between, the pages
# (2^order each) every task but kswapd allocated in between, those the first caller's comm
# allocated, and the direct reclaims that began in between); then "@@kswapd_wake_lost N"
# (events the ring buffer dropped). The time tasks spent in direct reclaim, from
# mm_vmscan_direct_reclaim_begin to _end (try_to_free_pages, mm/vmscan.c 6.12; the
# task's own CPU and its sleeps there): "@@dreclaim N TOTAL_US MAX_US", so validation can
# tell a task's fault time from its reclaim.
wake_trace() {
    T=/sys/kernel/tracing
    I=$T/instances/rl_kswapd
    case "$1" in
    start)
        [ -d $T/events ] || mount -t tracefs none $T 2>/dev/null || return 0
        [ -d $T/events/vmscan/mm_vmscan_kswapd_wake ] || return 0
        mkdir -p $I 2>/dev/null || return 0
        echo 1 > $I/events/vmscan/mm_vmscan_wakeup_kswapd/enable
        echo 1 > $I/events/vmscan/mm_vmscan_kswapd_wake/enable
        echo 1 > $I/events/vmscan/mm_vmscan_direct_reclaim_begin/enable
        echo 1 > $I/events/vmscan/mm_vmscan_direct_reclaim_end/enable
        echo 'enable_event:kmem:mm_page_alloc' > $I/events/vmscan/mm_vmscan_wakeup_kswapd/trigger 2>/dev/null
        echo 'disable_event:kmem:mm_page_alloc' > $I/events/vmscan/mm_vmscan_kswapd_wake/trigger 2>/dev/null
        vmscan_trace start ;;
    end)
        [ -e $I/events/vmscan/mm_vmscan_kswapd_wake/enable ] || return 0
        echo 0 > $I/events/vmscan/mm_vmscan_wakeup_kswapd/enable
        echo 0 > $I/events/vmscan/mm_vmscan_kswapd_wake/enable
        echo 0 > $I/events/vmscan/mm_vmscan_direct_reclaim_begin/enable
        echo 0 > $I/events/vmscan/mm_vmscan_direct_reclaim_end/enable
        echo '!enable_event:kmem:mm_page_alloc' > $I/events/vmscan/mm_vmscan_wakeup_kswapd/trigger 2>/dev/null
        echo '!disable_event:kmem:mm_page_alloc' > $I/events/vmscan/mm_vmscan_kswapd_wake/trigger 2>/dev/null
        vmscan_trace end
        awk 'function kv(k,   j) { for (j = 1; j <= NF; j++) if (index($j, k "=") == 1) return substr($j, length(k) + 2); return "" }
             { for (i = 2; i <= NF; i++) if ($i ~ /^mm_(vmscan_wakeup_kswapd|vmscan_kswapd_wake|vmscan_direct_reclaim_(begin|end)|page_alloc):$/) {
                   ts = $(i - 1); sub(/:$/, "", ts); c = $1; sub(/-[0-9]+$/, "", c)
                   if ($i == "mm_page_alloc:") { if (n && c !~ /^kswapd/) { for (o = kv("order") + 0, k = 1; o > 0; o--) k *= 2; pg += k; if (c == wc) wp += k } }
                   else if ($i == "mm_vmscan_direct_reclaim_begin:") { if (n) st++; db[$1] = ts }
                   else if ($i == "mm_vmscan_direct_reclaim_end:") { if ($1 in db) { us = (ts - db[$1]) * 1e6; dn++; ds += us; if (us > dm) dm = us; delete db[$1] } }
                   else if ($i == "mm_vmscan_wakeup_kswapd:") { if (!n) { t0 = ts; wc = c; pg = 0; wp = 0; st = 0 }; n++ }
                   else { if (n) printf "@@kswapd_wake %.0f %d %d %d %d\n", (ts - t0) * 1e6, n, pg, wp, st; n = 0 }
                   break } }
             END { printf "@@dreclaim %d %.0f %.0f\n", dn, ds, dm }' $I/trace
        echo "@@kswapd_wake_lost $(overruns $I)"
        rmdir $I 2>/dev/null ;;
    esac
}
# lab.vmtrace=1 (`kernel run --vmscan-trace`; off by default: its ring buffer takes 2 x 4 MiB
# of the guest's memory before the workload starts): reclaim's own tracepoints in the same
# instance (mm/vmscan.c 6.12: mm_vmscan_lru_isolate, mm_vmscan_lru_shrink_inactive,
# mm_vmscan_lru_shrink_active, mm_vmscan_kswapd_sleep, mm_vmscan_direct_reclaim_begin;
# mm/swap.c lru_activate: mm_lru_activate), summed in the guest. Per kswapd pass (from its
# mm_vmscan_kswapd_wake to the next): "@@vmpass T_US ZID ORDER WAKES WAKE_MINZID CALLS
# SCANNED TAKEN SKIPPED RECLAIMED ACT_FILE REF_KEEP UNMAP_FAIL MIN_PRIORITY ACTIVE_TAKEN
# DEACTIVATED SORTED GFP0_WAKES EXTFRAG_LOW" (T_US from the first event; WAKES the wakeup_kswapd
# calls since the previous pass and the lowest zid they asked for; SCANNED/RECLAIMED/ACT_FILE/
# REF_KEEP from shrink_inactive; TAKEN/SKIPPED from isolate; SORTED: isolate's nr_scanned less
# taken and skipped, MGLRU's sort_folio moves (counted as PGREFILL: promoted, protected, or a
# zone above the pass's reclaim_idx); GFP0_WAKES: the wake-ups since the previous pass with
# gfp_flags 0, rmqueue's for a boosted zone (mm/page_alloc.c 6.12; a wake-up while kswapd runs
# is not traced, wakeup_kswapd returns before its tracepoint); EXTFRAG_LOW: kmem's
# mm_page_alloc_extfrag fallbacks since the previous pass from the node's lowest zone, DMA).
# The fallbacks summed over the run (__rmqueue_fallback: a page of FALLBACK_MT's free lists
# taken for ALLOC_MT, the whole block claimed or not; try_to_steal_block boosts the zone's
# watermark first): "@@extfrag ZONE ALLOC_MT FALLBACK_MT FALLBACK_ORDER OWNERSHIP COMM N".
# Direct reclaim summed over the run: "@@vmdirect
# CALLS SCANNED TAKEN SKIPPED RECLAIMED ACT_FILE"; lru_activate (folio_mark_accessed's second
# touch) by the task that drained the batch: "@@lru_activate COMM N"; "@@vmtrace_lost N".
# Level 2 also traces the shrinkers (mm/shrinker.c 6.12 do_shrink_slab), per scan function and
# node: "@@shrink ADDR NID CALLS SCANNED FREED" (SCANNED: the batches' objects, from
# mm_shrink_slab_start's total_scan less the end's leftover; FREED: the scan functions'
# returns, SHRINK_STOP left out), with "@@ksym NAME ADDR" for the THP deferred split scan.
VMTRACE_EVENTS="vmscan/mm_vmscan_lru_isolate vmscan/mm_vmscan_lru_shrink_inactive vmscan/mm_vmscan_lru_shrink_active vmscan/mm_vmscan_kswapd_sleep vmscan/mm_vmscan_direct_reclaim_begin pagemap/mm_lru_activate kmem/mm_page_alloc_extfrag"
VMTRACE_SHRINK="vmscan/mm_shrink_slab_start vmscan/mm_shrink_slab_end"
vmscan_trace() {
    grep -q 'lab.vmtrace=3' /proc/cmdline && { pcp_refill_trace "$1"; return 0; }
    grep -q 'lab.vmtrace=[12]' /proc/cmdline || return 0
    case "$1" in
    start)
        echo 4096 > $I/buffer_size_kb
        # Every field as "name=0xHEX (DEC)": the zone a wake-up asked for (zid) is not in the
        # events' own format (include/trace/events/vmscan.h 6.12).
        echo 1 > $I/options/fields 2>/dev/null
        for e in $VMTRACE_EVENTS; do echo 1 > $I/events/$e/enable; done
        # Every pageblock claim attempt below pageblock_order (try_to_steal_block, 6.12.117
        # mm/page_alloc.c: boost_watermark, then prep_move_freepages_block, which only it and
        # the isolation and highatomic paths call): a kprobe at prep_move_freepages_block's
        # entry with the zone and its watermark_boost as boost_watermark just left it (struct
        # zone's fifth word, after _watermark[NR_WMARK]). Defined once and never removed:
        # removing a probe event clears the ring buffers that may hold it.
        [ -d $T/events/kprobes/rl_claim ] ||
            echo 'p:rl_claim prep_move_freepages_block zone=%di:x64 boost=+32(%di):u64' >> $T/kprobe_events 2>/dev/null
        echo 1 > $I/events/kprobes/rl_claim/enable 2>/dev/null
        # lab.vmtrace=2: also DMA32's per-CPU lists every 20 ms (/proc/zoneinfo's pagesets):
        # "@@pcp T_MS CPU COUNT HIGH FREE BOOST" at the end (BOOST: zone->watermark_boost,
        # which boost_watermark raises and a boosted kswapd pass takes back; mm/vmstat.c
        # zoneinfo_show_print's "boost" line). Every fifth sample also DMA32's non-movable
        # free blocks per order, "@@ptfree T_MS TYPE N0 .. N10" (/proc/pagetypeinfo: where a
        # refill's claim attempt can find a block of order >= 4, pageblock_order / 2, and
        # boost).
        if grep -q 'lab.vmtrace=2' /proc/cmdline; then
            for e in $VMTRACE_SHRINK; do echo 1 > $I/events/$e/enable; done
            ( k=0; while :; do t="$(cut -d' ' -f1 /proc/uptime)"; awk -v t="$t" '
                  $1 == "Node" { z = $4 } z == "DMA32" && $1 == "pages" && $2 == "free" { f = $3 }
                  z == "DMA32" && $1 == "boost" { b = $2 }
                  z == "DMA32" && $1 == "cpu:" { c = $2 } z == "DMA32" && $1 == "count:" { n = $2 }
                  z == "DMA32" && $1 == "high:" { printf "@@pcp %.0f %d %d %d %d %d\n", t * 1000, c, n, $2, f, b }' /proc/zoneinfo
                  k=$((k + 1)); if [ $((k % 5)) = 0 ]; then awk -v t="$t" '$1 == "Node" && $4 == "DMA32," && ($6 == "Unmovable" || $6 == "Reclaimable") {
                      printf "@@ptfree %.0f %s", t * 1000, $6; for (i = 7; i <= 17; i++) printf " %s", $i; printf "\n" }' /proc/pagetypeinfo; fi
                  usleep 20000; done > /run/pcp.log ) &
            echo $! > /run/pcp.pid
        fi ;;
    end)
        for e in $VMTRACE_EVENTS $VMTRACE_SHRINK; do echo 0 > $I/events/$e/enable 2>/dev/null; done
        # The claim attempts per zone, lowest zone first (node_zones[] is in zone order):
        # "@@claim RANK ATTEMPTS FIRST" (FIRST: those that found the zone unboosted, i.e. left
        # watermark_boost at one pageblock, 512 pages), or "@@claim none" without the kprobe.
        if [ -e $I/events/kprobes/rl_claim/enable ]; then
            echo 0 > $I/events/kprobes/rl_claim/enable
            awk '/ rl_claim: / { z = ""; b = 0; for (i = 1; i <= NF; i++) { if ($i ~ /^zone=/) z = substr($i, 6); if ($i ~ /^boost=/) b = substr($i, 7) + 0 }
                     n[z]++; if (b == 512) f[z]++ }
                 END { k = 0; for (z in n) zs[++k] = z
                       for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (zs[j] < zs[i]) { t = zs[i]; zs[i] = zs[j]; zs[j] = t }
                       for (i = 1; i <= k; i++) printf "@@claim %d %d %d\n", i - 1, n[zs[i]], f[zs[i]] }' $I/trace
        else
            echo "@@claim none"
        fi
        # The zones' first pfns ("START:NAME ..."), lowest first, for the fallbacks' zone.
        awk -v zs="$(awk '$1 == "Node" { z = $4 } $1 == "start_pfn:" { print $2 ":" z }' /proc/zoneinfo | sort -n | tr '\n' ' ')" \
            'function kv(k,   j, v) { for (j = i + 1; j <= NF; j++) if (index($j, k "=") == 1) {
                 v = substr($j, length(k) + 2); if (v ~ /^0x/) { v = $(j + 1); gsub(/[()]/, "", v) }; return v + 0 }; return 0 }
             function hex(k,   j) { for (j = i + 1; j <= NF; j++) if (index($j, k "=0x") == 1) return substr($j, length(k) + 4); return "?" }
             function flush() { if (np) printf "@@vmpass %.0f %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", (pt - t0) * 1e6, pz, po, pw, pwz, c, sc, tk, sk, rc, ac, rk, uf, mp, at, dc, so, pg0, pel }
             function zone(pfn,   j, a, b, z) { z = "?"; for (j = 1; j <= nz; j++) { split(zl[j], a, ":"); if (pfn >= a[1] + 0) z = a[2] }; return z }
             BEGIN { nz = split(zs, zl, " ") }
             { for (i = 2; i <= NF; i++) if ($i ~ /^mm_(vmscan|lru|shrink_slab|page_alloc)_[a-z_]*:$/) break
               if (i > NF) next
               ev = $i
               if (ev == "mm_shrink_slab_start:") { todo[hex("shrink") " " kv("nid")] = kv("total_scan"); next }
               if (ev == "mm_shrink_slab_end:") { key = hex("shrink") " " kv("nid"); calls[key]++; done[key] += todo[key] - kv("total_scan"); todo[key] = 0
                   r = kv("retval"); if (r > 0) freed[key] += r; next }
               ts = $(i - 1); sub(/:$/, "", ts); if (t0 == "") t0 = ts
               k = ($1 ~ /^kswapd/)
               if (ev == "mm_page_alloc_extfrag:") { z = zone(kv("pfn")); n = $1; sub(/-[0-9]+$/, "", n)
                   ef[z " " kv("alloc_migratetype") " " kv("fallback_migratetype") " " kv("fallback_order") " " kv("change_ownership") " " n]++
                   if (nz && z == substr(zl[1], index(zl[1], ":") + 1)) el++; next }
               if (ev == "mm_vmscan_wakeup_kswapd:") { w++; z = kv("zid"); if (w == 1 || z < wz) wz = z; if (kv("gfp_flags") == 0) g0++; next }
               if (ev == "mm_vmscan_kswapd_wake:") { flush(); np = 1; pt = ts; pz = kv("zid"); po = kv("order"); pw = w; pwz = (w ? wz : -1); w = 0
                   pg0 = g0; g0 = 0; pel = el; el = 0
                   c = sc = tk = sk = rc = ac = rk = uf = at = dc = so = 0; mp = 99; next }
               if (ev == "mm_lru_activate:") { n = $1; sub(/-[0-9]+$/, "", n); la[n]++; next }
               if (ev == "mm_vmscan_direct_reclaim_begin:") { if (!k) dcalls++; next }
               if (ev == "mm_vmscan_lru_isolate:") { if (k) { tk += kv("nr_taken"); sk += kv("nr_skipped"); so += kv("nr_scanned") - kv("nr_taken") - kv("nr_skipped") } else { dtk += kv("nr_taken"); dsk += kv("nr_skipped") }; next }
               if (ev == "mm_vmscan_lru_shrink_inactive:") {
                   if (k) { c++; sc += kv("nr_scanned"); rc += kv("nr_reclaimed"); ac += kv("nr_activate_file") + kv("nr_activate1"); rk += kv("nr_ref_keep"); uf += kv("nr_unmap_fail"); p = kv("priority"); if (p < mp) mp = p }
                   else { dc2++; dsc += kv("nr_scanned"); drc += kv("nr_reclaimed"); dac += kv("nr_activate_file") + kv("nr_activate1") + kv("nr_activate1") }
                   next }
               if (ev == "mm_vmscan_lru_shrink_active:" && k) { at += kv("nr_taken"); dc += kv("nr_deactivated") } }
             END { flush(); printf "@@vmdirect %d %d %d %d %d %d\n", dcalls, dsc, dtk, dsk, drc, dac
                   for (n in la) printf "@@lru_activate %s %d\n", n, la[n]
                   for (s in calls) printf "@@shrink %s %d %d %d\n", s, calls[s], done[s], freed[s]
                   for (e in ef) printf "@@extfrag %s %d\n", e, ef[e] }' $I/trace
        awk '$3 == "deferred_split_scan" { printf "@@ksym deferred_split_scan %s\n", $1 }' /proc/kallsyms
        [ -e /run/pcp.pid ] && { kill $(cat /run/pcp.pid); cat /run/pcp.log; }
        # lab.vmtrace=2: also the first 600 of kswapd's and the allocator's events as they are.
        grep -q 'lab.vmtrace=2' /proc/cmdline && grep -E 'mm_vmscan_(kswapd_wake|wakeup_kswapd|lru_isolate|lru_shrink_inactive|lru_shrink_active|direct_reclaim_begin)' $I/trace |
            head -n 600 | sed 's/^ */@@vmraw /'
        echo "@@vmtrace_lost $(overruns $I)" ;;
    esac
}
# lab.vmtrace=3 (instead of the above): the sizes of the per-CPU lists' refills from the
# buddy lists (rmqueue_bulk: one kmem/mm_page_alloc_zone_locked event with percpu_refill
# per frame, mm/page_alloc.c 6.12; a refill is a run of them on one CPU less than 50 us
# apart), in an instance of their own that keeps the run's last 6 MiB a CPU:
# "@@refill CPU FRAMES N" (N refills of FRAMES frames), each refill in time order
# "@@refillseq T_US CPU FRAMES" (T_US: the trace clock), "@@refill_lost N"; histogram
# triggers' counts by task, "@@hist EVENT {KEYS} hitcount: N".
pcp_refill_trace() {
    P=/sys/kernel/tracing/instances/rl_pcp
    case "$1" in
    start)
        mkdir -p $P 2>/dev/null || return 0
        echo 6144 > $P/buffer_size_kb
        echo 'percpu_refill == 1' > $P/events/kmem/mm_page_alloc_zone_locked/filter
        # Who refills which migratetype's list, and who frees order-0 pages (each free
        # halves its CPU's alloc_factor, free_unref_page_commit): histogram triggers.
        echo 'hist:keys=common_pid.execname,migratetype:vals=hitcount:sort=hitcount.descending if percpu_refill == 1' \
            > $P/events/kmem/mm_page_alloc_zone_locked/trigger 2>/dev/null
        echo 'hist:keys=common_pid.execname:vals=hitcount:sort=hitcount.descending if order == 0' \
            > $P/events/kmem/mm_page_free/trigger 2>/dev/null
        # The frames the lists give back to the buddy lists, by their pageblock's type
        # (free_pcppages_bulk), and the fallbacks, by who allocated and from which type: a
        # stolen frame a refill put at a list's tail and a drain gave back unused shows as
        # both (mm_page_pcpu_drain migratetype 0/2 beside mm_page_alloc_extfrag).
        echo 'hist:keys=common_pid.execname,migratetype:vals=hitcount:sort=hitcount.descending if order == 0' \
            > $P/events/kmem/mm_page_pcpu_drain/trigger 2>/dev/null
        echo 'hist:keys=common_pid.execname,fallback_migratetype:vals=hitcount:sort=hitcount.descending' \
            > $P/events/kmem/mm_page_alloc_extfrag/trigger 2>/dev/null
        echo 1 > $P/events/kmem/mm_page_alloc_zone_locked/enable ;;
    end)
        [ -e $P/events/kmem/mm_page_alloc_zone_locked/enable ] || return 0
        echo 0 > $P/events/kmem/mm_page_alloc_zone_locked/enable
        awk '{ for (i = 2; i <= NF; i++) if ($i == "mm_page_alloc_zone_locked:") break
               if (i > NF) next
               ts = $(i - 1); sub(/:$/, "", ts); c = $(i - 3); gsub(/[][]/, "", c); c += 0
               if (n[c] && ts - t[c] > 0.00005) { h[c " " n[c]]++; printf "@@refillseq %.0f %d %d\n", t0[c] * 1e6, c, n[c]; n[c] = 0 }
               if (!n[c]) t0[c] = ts
               n[c]++; t[c] = ts }
             END { for (c in n) if (n[c]) { h[c " " n[c]]++; printf "@@refillseq %.0f %d %d\n", t0[c] * 1e6, c, n[c] }
                   for (k in h) printf "@@refill %s %d\n", k, h[k] }' $P/trace
        for e in mm_page_alloc_zone_locked mm_page_free mm_page_pcpu_drain mm_page_alloc_extfrag; do
            grep '^{' $P/events/kmem/$e/hist 2>/dev/null | head -n 20 | sed "s/^/@@hist $e /" | tr -s ' '
        done
        echo "@@refill_lost $(overruns $P)"
        rmdir $P 2>/dev/null ;;
    esac
}
# The CPU time of each kswapd ("@@kthread WHEN NAME TICKS": utime + stime of
# /proc/PID/stat, clock ticks) and of all CPUs ("@@cpustat WHEN FIELDS": /proc/stat's cpu
# line, user nice system idle iowait irq softirq ...), so validation can measure what a
# page scanned costs the guest's kswapd against what a disk read takes.
cpustat() {
    awk -v when="$1" '$2 ~ /^\(kswapd/ { n = $2; gsub(/[()]/, "", n); print "@@kthread " when " " n " " ($14 + $15) }' \
        /proc/[0-9]*/stat 2>/dev/null
    echo "@@cpustat $1 $(sed -n 's/^cpu  *//p' /proc/stat)"
    # khugepaged's progress ("@@khugepaged WHEN full_scans N pages_collapsed N"): whether its
    # scans reached the workload's ranges (the model's collapse against the guest's).
    K=/sys/kernel/mm/transparent_hugepage/khugepaged
    if [ -r $K/full_scans ]; then echo "@@khugepaged $1 full_scans $(cat $K/full_scans) pages_collapsed $(cat $K/pages_collapsed)"; fi
}
# DAMON_RECLAIM (lab.damon=module|sysfs; its parameters came on the command line as
# damon_reclaim.KEY=VALUE and the kernel parsed them into $DAMON). Enabled when the
# workload starts: "module" writes enabled=Y; "sysfs" builds the scheme the module would
# (mm/damon/reclaim.c, damon_reclaim_new_scheme) under DAMON's sysfs interface, for
# kernels whose module drops its own scheme (v6.11..v6.16, docs/kernel.md). Then (or
# with lab.sample=1 alone) a sampler prints "@@sample UPTIME MEMORY_CURRENT
# BYTES_RECLAIMED" every 0.5 s until the workload ends (python/reclaimlab/kernel/damon.py).
DAMON=/sys/module/damon_reclaim/parameters
KD=/sys/kernel/mm/damon/admin/kdamonds/0
# The value of lab.$1=WORD on the kernel command line (empty without it).
lab_value() { sed -n "s/.*lab\\.$1=\\([a-z]*\\).*/\\1/p" /proc/cmdline; }
damon_mode() { lab_value damon; }
# The stats as the module names them, for interface $1 (sysfs: refreshed from kdamond first).
damon_stats() {
    if [ "$1" = sysfs ]; then
        echo update_schemes_stats > $KD/state
        S=$KD/contexts/0/schemes/0/stats
        echo "nr_reclaim_tried_regions $(cat $S/nr_tried)"
        echo "bytes_reclaim_tried_regions $(cat $S/sz_tried)"
        echo "nr_reclaimed_regions $(cat $S/nr_applied)"
        echo "bytes_reclaimed_regions $(cat $S/sz_applied)"
        echo "nr_quota_exceeds $(cat $S/qt_exceeds)"
    else
        for f in nr_reclaim_tried_regions bytes_reclaim_tried_regions nr_reclaimed_regions \
                 bytes_reclaimed_regions nr_quota_exceeds; do echo "$f $(cat $DAMON/$f)"; done
    fi
}
damon_pid() { if [ "$1" = sysfs ]; then cat $KD/pid; else cat $DAMON/kdamond_pid; fi; }
# damon_find_biggest_system_ram() (mm/damon/core.c): the biggest "System RAM" of /proc/iomem.
biggest_ram() {
    best=0; bs=0; be=0
    while IFS= read -r line; do
        case "$line" in
            [0-9a-f]*" : System RAM")
                r=${line%% :*}; s=$((0x${r%-*})); e=$((0x${r#*-} + 1))
                [ $((e - s)) -gt $best ] && { best=$((e - s)); bs=$s; be=$e; } ;;
        esac
    done < /proc/iomem
    echo "$bs $be"
}
damon_sysfs_on() {
    v() { cat $DAMON/$1; }
    A=/sys/kernel/mm/damon/admin/kdamonds
    echo 1 > $A/nr_kdamonds && echo 1 > $KD/contexts/nr_contexts || return 1
    C=$KD/contexts/0
    echo paddr > $C/operations
    M=$C/monitoring_attrs
    echo "$(v sample_interval)" > $M/intervals/sample_us
    echo "$(v aggr_interval)" > $M/intervals/aggr_us
    echo 0 > $M/intervals/update_us
    echo "$(v max_nr_regions)" > $M/nr_regions/max
    echo "$(v min_nr_regions)" > $M/nr_regions/min
    echo 1 > $C/targets/nr_targets && echo 1 > $C/targets/0/regions/nr_regions || return 1
    start=$(v monitor_region_start); end=$(v monitor_region_end)
    if [ "$start" = 0 ] && [ "$end" = 0 ]; then
        set -- $(biggest_ram)
        start=$1; end=$2
    fi
    echo "$end" > $C/targets/0/regions/0/end && echo "$start" > $C/targets/0/regions/0/start || return 1
    echo 1 > $C/schemes/nr_schemes || return 1
    S=$C/schemes/0
    # lab.damon_action=stat: the same scheme monitoring only (kdamond's monitoring cost alone)
    act=$(lab_value damon_action)
    echo "${act:-pageout}" > $S/action
    P=$S/access_pattern
    # (sysfs ranges start at 0..0: every bound is written)
    echo 18446744073709551615 > $P/sz/max && echo 4096 > $P/sz/min
    echo 0 > $P/nr_accesses/max && echo 0 > $P/nr_accesses/min
    echo 4294967295 > $P/age/max
    echo $(($(v min_age) / $(v aggr_interval))) > $P/age/min
    Q=$S/quotas
    echo "$(v quota_ms)" > $Q/ms
    echo "$(v quota_sz)" > $Q/bytes
    echo "$(v quota_reset_interval_ms)" > $Q/reset_interval_ms
    echo 0 > $Q/weights/sz_permil && echo 0 > $Q/weights/nr_accesses_permil && echo 1 > $Q/weights/age_permil
    psi=$(v quota_mem_pressure_us); feedback=$(v quota_autotune_feedback)
    n=0
    [ "$psi" != 0 ] && n=$((n + 1))
    [ "$feedback" != 0 ] && n=$((n + 1))
    echo $n > $Q/goals/nr_goals
    g=0
    if [ "$psi" != 0 ]; then
        echo some_mem_psi_us > $Q/goals/$g/target_metric; echo "$psi" > $Q/goals/$g/target_value
        g=$((g + 1))
    fi
    if [ "$feedback" != 0 ]; then
        echo user_input > $Q/goals/$g/target_metric; echo 10000 > $Q/goals/$g/target_value
        echo "$feedback" > $Q/goals/$g/current_value
    fi
    W=$S/watermarks
    echo free_mem_rate > $W/metric
    echo "$(v wmarks_interval)" > $W/interval_us
    echo "$(v wmarks_high)" > $W/high && echo "$(v wmarks_mid)" > $W/mid && echo "$(v wmarks_low)" > $W/low
    if [ "$(v skip_anon)" = Y ]; then
        echo 1 > $S/filters/nr_filters && echo anon > $S/filters/0/type && echo Y > $S/filters/0/matching
    fi
    echo on > $KD/state
}
damon_start() {
    mode=$(damon_mode)
    if [ "$mode" = sysfs ]; then
        damon_sysfs_on || { echo "@@error damon sysfs setup"; return 1; }
    elif [ "$mode" = module ]; then
        echo Y > $DAMON/enabled || { echo "@@error damon_reclaim enabled"; return 1; }
    fi
    [ -n "$mode" ] && echo "@@damon_reclaim interface $mode" && damon_trace start
    [ "$mode" = sysfs ] && echo "@@damon_reclaim action $(cat $KD/contexts/0/schemes/0/action)"
    grep -q 'lab.sample=1' /proc/cmdline || [ -n "$mode" ] || return 0
    mkfifo /run/pause
    sampler "$mode" &
    echo $! > /run/sampler.pid
}
# DAMON's regions after every aggregation (the damon_aggregated tracepoint,
# include/trace/events/damon.h 6.12: one event per region from kdamond_reset_aggregated),
# kept in a tracefs instance of their own (2 MiB a CPU, made before the workload's start
# report so the simulator counts it as the kernel's memory) and read only after the
# workload: a reader running beside it would be guest memory DAMON samples too (its
# pages are LRU folios). Summarised as "@@snap TIME NR_REGIONS IDLE WARM HOT": bytes of
# regions with no access, with accesses in under a quarter of the aggregation's samples,
# and in at least a quarter; "@@regs TIME START:END:NR_ACCESSES ..." the regions
# themselves (page frame numbers); then "@@snap_lost N" (events the buffer overwrote).
DT=/sys/kernel/tracing/instances/rl_damon
damon_trace() {
    case "$1" in
    prepare)
        [ -n "$(damon_mode)" ] || return 0
        [ -d /sys/kernel/tracing/events ] || mount -t tracefs none /sys/kernel/tracing 2>/dev/null || return 0
        mkdir -p $DT 2>/dev/null && echo 2048 > $DT/buffer_size_kb ;;
    start)
        [ -e $DT/events/damon/damon_aggregated/enable ] && echo 1 > $DT/events/damon/damon_aggregated/enable ;;
    end)
        [ -e $DT/events/damon/damon_aggregated/enable ] || return 0
        echo 0 > $DT/events/damon/damon_aggregated/enable
        awk -v max=$(($(cat $DAMON/aggr_interval) / $(cat $DAMON/sample_interval))) '
            function flush() {
                if (cnt == n) {
                    sub(/:$/, "", t)
                    printf "@@snap %s %d %.0f %.0f %.0f\n", t, n, idle, warm, hot
                    printf "@@regs %s%s\n", t, regs
                }
                cnt = idle = warm = hot = 0; regs = ""
            }
            / damon_aggregated: / {
                for (i = 1; i <= NF; i++) {
                    if ($i == "damon_aggregated:") tt = $(i - 1)
                    if ($i ~ /^nr_regions=/) { m = substr($i, 12) + 0; split($(i + 1), r, "-"); nr = $(i + 2) + 0 }
                }
                # an aggregation lists its regions in address order: a lower start begins
                # the next one (an aggregation the buffer lost part of is left out)
                if (cnt && r[1] + 0 <= last) flush()
                n = m; t = tt; last = r[1] + 0; cnt++
                sz = r[2] - r[1]
                regs = regs " " int(r[1] / 4096) ":" int((r[2] + 0) / 4096) ":" nr
                if (nr == 0) idle += sz; else if (nr * 4 < max) warm += sz; else hot += sz
            }
            END { if (cnt) flush() }' $DT/trace
        echo "@@snap_lost $(overruns $DT)"
        rmdir $DT 2>/dev/null ;;
    esac
}
# "@@sample UPTIME MEMORY_CURRENT BYTES_RECLAIMED" every 0.5 s while the workload runs
# ($1 the DAMON_RECLAIM interface, "" without it), with shell built-ins only (read, echo,
# and read -t on a FIFO nobody writes, /run/pause, for the pause): a command it forked and
# executed would give DAMON freshly allocated, young pages to sample every half second.
sampler() {
    read -r cg < /run/cg0
    case "$1" in
        sysfs) stat=$KD/contexts/0/schemes/0/stats/sz_applied ;;
        module) stat=$DAMON/bytes_reclaimed_regions ;;
        *) stat= ;;
    esac
    mode=$1 kpid=
    [ "$mode" = sysfs ] && read -r kpid < $KD/pid
    exec 3<> /run/pause
    while :; do
        read -r up _ < /proc/uptime
        read -r cur < "$cg/memory.current"
        rec=0
        if [ -n "$stat" ]; then
            [ "$mode" = sysfs ] && echo update_schemes_stats > $KD/state
            read -r rec < "$stat"
        fi
        echo "@@sample $up $cur $rec"
        [ -n "$kpid" ] && quota_sample
        read -t 0.5 _ <&3
    done
}
# "@@quota UPTIME EFFECTIVE_BYTES SZ_TRIED QT_EXCEEDS KDAMOND_TICKS" (sysfs interface):
# the scheme's effective size quota (quotas/effective_bytes, refreshed by the
# update_schemes_effective_quotas command: mm/damon/sysfs.c 6.12; a time quota's is
# damos_set_effective_quota's throughput x ms), its tried bytes and quota exceeds so far
# (refreshed by the sampler's update_schemes_stats just before), and kdamond's CPU time
# (utime + stime of /proc/PID/stat, clock ticks). Built-ins only, like the sampler.
quota_sample() {
    Sq=$KD/contexts/0/schemes/0
    echo update_schemes_effective_quotas > $KD/state
    read -r esz < $Sq/quotas/effective_bytes
    read -r tried < $Sq/stats/sz_tried
    read -r qx < $Sq/stats/qt_exceeds
    read -r kst < /proc/$kpid/stat
    set -- $kst
    echo "@@quota $up $esz $tried $qx $((${14} + ${15}))"
}
# One "@@sample" line; $1 the DAMON_RECLAIM interface ("" without it).
sample() {
    read -r up _ < /proc/uptime
    read -r cur < "$(cat /run/cg0)/memory.current"
    rec=0
    [ -n "$1" ] && rec=$(damon_stats "$1" | sed -n 's/^bytes_reclaimed_regions //p')
    echo "@@sample $up $cur $rec"
}
# Right after the workload, before the other end records (the scheduler trace alone can
# be tens of thousands of lines, which the serial console takes tens of seconds to print
# under TCG, while a running kdamond would go on paging out): the last sample, kdamond's
# CPU time (clock ticks, from /proc/PID/stat), every parameter and statistic; then off.
damon_stop() {
    [ -e /run/sampler.pid ] || return 0
    kill "$(cat /run/sampler.pid)"
    mode=$(damon_mode)
    sample "$mode"
    [ -n "$mode" ] || return 0
    pid=$(damon_pid "$mode")
    [ "$pid" -gt 0 ] 2>/dev/null && echo "@@damon_reclaim kdamond_ticks $(awk '{print $14 + $15}' /proc/$pid/stat)"
    for f in $DAMON/*; do
        case "${f##*/}" in *_reclaim*_regions | nr_quota_exceeds | kdamond_pid) ;; *) echo "@@damon_reclaim ${f##*/} $(cat "$f")" ;; esac
    done
    damon_stats "$mode" | sed 's/^/@@damon_reclaim /'
    if [ "$mode" = sysfs ]; then echo off > $KD/state; else echo N > $DAMON/enabled; fi
}
# The data disk's request queue (block/blk-sysfs.c, block/blk-wbt.c 6.12): "@@blkq KEY
# VALUE" for its limits, scheduler, hardware queues, tags and writeback throttling (wbt)
# as set up at boot.
blkq() {
    Q=/sys/block/vda/queue
    [ -d $Q ] || return 0
    for k in nr_requests max_sectors_kb max_hw_sectors_kb max_segments rotational write_cache wbt_lat_usec scheduler; do
        [ -e $Q/$k ] && echo "@@blkq $k $(cat $Q/$k | tr ' ' _)"
    done
    echo "@@blkq nr_hw_queues $(ls -d /sys/block/vda/mq/[0-9]* 2>/dev/null | wc -l)"
    [ -e /sys/block/vda/mq/0/nr_tags ] && echo "@@blkq nr_tags $(cat /sys/block/vda/mq/0/nr_tags)"
    W=/sys/kernel/debug/block/vda/rqos/wbt
    for k in wb_normal wb_background min_lat_nsec enabled; do [ -e $W/$k ] && echo "@@blkq wbt_$k $(cat $W/$k)"; done
}
# lab.wbsample=1 (validate --wb-sample): while the workload runs, every 50 ms, "@@wbs T_MS
# READS_IN_FLIGHT WRITES_IN_FLIGHT WBT_INFLIGHT WBT_NORMAL WBT_BACKGROUND NR_DIRTY
# NR_WRITEBACK NR_VMSCAN_IMMEDIATE_RECLAIM NR_FREE_PAGES" (/sys/block/vda/inflight: requests
# issued to the driver and not done; wbt's tracked background writes in flight and its
# current limits; /proc/vmstat's global dirty and writeback pages, reclaim's count of dirty
# folios met and the free pages, which reading does not flush the memcg statistics as
# memory.stat would), printed at the
# end. Shell builtins only: the 50 ms wait is a read with a timeout on a FIFO nobody
# writes, so the sampler forks nothing while the workload runs.
wb_sample() {
    grep -q 'lab.wbsample=1' /proc/cmdline || return 0
    W=/sys/kernel/debug/block/vda/rqos/wbt
    mkfifo /run/wbs.fifo || return 0
    (
        exec 3<> /run/wbs.fifo
        while :; do
            read -r up _ < /proc/uptime
            read -r ir iw < /sys/block/vda/inflight
            wi=-1; wn=-1; wbg=-1
            if [ -e $W/inflight ]; then
                read -r _ _ wi < $W/inflight; read -r wn < $W/wb_normal; read -r wbg < $W/wb_background
            fi
            d=-1; w=-1; im=-1; f=-1
            while read -r k v; do
                case "$k" in nr_free_pages) f=$v ;; nr_dirty) d=$v ;; nr_writeback) w=$v ;; nr_vmscan_immediate_reclaim) im=$v; break ;; esac
            done < /proc/vmstat
            echo "@@wbs ${up%.*}${up#*.}0 $ir $iw $wi $wn $wbg $d $w $im $f"
            read -t 0.05 -u 3 _
        done > /run/wbs.log
    ) &
    echo $! > /run/wbs.pid
}
wb_sample_end() {
    [ -e /run/wbs.pid ] || return 0
    kill "$(cat /run/wbs.pid)"
    cat /run/wbs.log
}
if [ "$1" = report ]; then
    report "$2"
    [ "$2" = start ] && { wb_sample; damon_start || exit 1; }
    exit 0
fi

/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /run
mount -t cgroup2 none /sys/fs/cgroup
mount -t debugfs none /sys/kernel/debug
fail() { echo "@@error $*"; poweroff -f; }

mglru=keep; rw=0; zram=0; swappiness=keep; wsf=keep; minfree=keep; tick=0; pin=0
ra=keep; fab=keep; thp=keep
for x in $(cat /proc/cmdline); do
    case "$x" in
        lab.ra=*) ra=${x#lab.ra=} ;;
        lab.fab=*) fab=${x#lab.fab=} ;;
        lab.thp=*) thp=${x#lab.thp=} ;;
        lab.mglru=*) mglru=${x#lab.mglru=} ;;
        lab.rw=*) rw=${x#lab.rw=} ;;
        lab.zram=*) zram=${x#lab.zram=} ;;
        lab.swappiness=*) swappiness=${x#lab.swappiness=} ;;
        lab.wsf=*) wsf=${x#lab.wsf=} ;;
        lab.minfree=*) minfree=${x#lab.minfree=} ;;
        lab.tick=*) tick=${x#lab.tick=} ;;
        lab.pin=*) pin=${x#lab.pin=} ;;
    esac
done

echo "@@boot $(uname -r) $(cut -d' ' -f1 /proc/uptime)"
report boot
# THP and fault-around as asked (lab.thp, lab.fab; "keep" = the kernel's default), then
# read back: the simulator is configured from what the guest reports.
thpfile=/sys/kernel/mm/transparent_hugepage/enabled
# (without CONFIG_TRANSPARENT_HUGEPAGE there is no file: never is all there is)
[ "$thp" != keep ] && [ -e $thpfile ] && { echo "$thp" > $thpfile || fail "transparent_hugepage/enabled $thp"; }
[ -e $thpfile ] && echo "@@thp $(cat $thpfile)"
fabfile=/sys/kernel/debug/fault_around_bytes
[ "$fab" != keep ] && { echo "$fab" > $fabfile || fail "fault_around_bytes $fab"; }
[ -e $fabfile ] && echo "@@fault_around_bytes $(cat $fabfile)"

# The kernel's own module requests (crypto-crc32c from ext4, ...) call /sbin/modprobe.
mkdir -p /sbin && ln -s /bin/modprobe /sbin/modprobe
modprobe virtio_pci 2>/dev/null
modprobe crc32c_generic 2>/dev/null
modprobe virtio_blk || fail "modprobe virtio_blk"
modprobe ext4 || fail "modprobe ext4"
i=0
while [ ! -b /dev/vda ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
# Readahead of the data disk (lab.ra; 0: no readahead for pread, no read-around for mapped
# faults, every page read is one the workload asked for). This, not MADV_RANDOM, is how the
# mapping avoids read-around in the lab setting: MADV_RANDOM would also make reclaim ignore
# the mapping's accessed bits (vma_has_recency()).
rafile=/sys/block/vda/queue/read_ahead_kb
[ "$ra" != keep ] && { echo "$ra" > $rafile || fail "read_ahead_kb $ra"; }
ra=$(cat $rafile)
echo "@@sysfs read_ahead_kb $ra"
blkq
# Read-only unless the workload writes (lab.rw=1; QEMU then keeps the writes in a
# temporary overlay, so every boot starts from the same disk).
if [ "$rw" = 1 ]; then
    mount -t ext4 -o rw /dev/vda /data || fail "mount /dev/vda rw"
else
    mount -t ext4 -o ro,noload /dev/vda /data || fail "mount /dev/vda"
fi

if [ "$zram" != 0 ]; then
    modprobe zram num_devices=1 || fail "modprobe zram"
    echo "$zram" > /sys/block/zram0/disksize || fail "zram disksize"
    mkswap /dev/zram0 >/dev/null || fail "mkswap"
    swapon /dev/zram0 || fail "swapon"
    echo "@@zram_comp $(cat /sys/block/zram0/comp_algorithm)"
fi
if [ "$mglru" != keep ]; then
    echo "$mglru" > /sys/kernel/mm/lru_gen/enabled || fail "lru_gen/enabled"
fi
[ -e /sys/kernel/mm/lru_gen/enabled ] && echo "@@lru_gen $(cat /sys/kernel/mm/lru_gen/enabled)"
[ "$swappiness" != keep ] && echo "$swappiness" > /proc/sys/vm/swappiness
[ "$wsf" != keep ] && echo "$wsf" > /proc/sys/vm/watermark_scale_factor
[ "$minfree" != keep ] && echo "$minfree" > /proc/sys/vm/min_free_kbytes
for k in min_free_kbytes watermark_scale_factor watermark_boost_factor swappiness percpu_pagelist_high_fraction; do echo "@@sysctl $k $(cat /proc/sys/vm/$k)"; done

echo +memory > /sys/fs/cgroup/cgroup.subtree_control
# The cgroups, flat under the root as the simulator's: "@@cgroup INDEX NAME MAX HIGH LOW
# MIN" as read back ("@@cgroup INDEX -" for the root cgroup).
procs=""; i=0
while read -r name max high low min; do
    if [ "$name" = - ]; then
        echo "@@cgroup $i -"; procs="$procs,-"; echo /sys/fs/cgroup >> /run/cgdirs; i=$((i + 1)); continue
    fi
    d=/sys/fs/cgroup/$name
    mkdir "$d" || fail "mkdir $d"
    echo "$max" > "$d/memory.max" || fail "$name memory.max $max"
    echo "$high" > "$d/memory.high" || fail "$name memory.high $high"
    echo "$low" > "$d/memory.low" || fail "$name memory.low $low"
    echo "$min" > "$d/memory.min" || fail "$name memory.min $min"
    echo "@@cgroup $i $name $(cat "$d/memory.max") $(cat "$d/memory.high") $(cat "$d/memory.low") $(cat "$d/memory.min")"
    [ $i = 0 ] && echo "@@memory.max $(cat "$d/memory.max")"
    procs="$procs,$d/cgroup.procs"; echo "$d" >> /run/cgdirs; i=$((i + 1))
done < /data/cgroups
[ -n "$procs" ] || fail "/data/cgroups lists no cgroup"
head -n 1 /run/cgdirs > /run/cg0
sync; echo 3 > /proc/sys/vm/drop_caches
# lab.pin=1: the workload on CPU 0, kswapd and kcompactd on CPU 1, as the simulator runs
# them (mm/pcp.rs): each CPU's per-CPU page lists then see one side only.
pinned=
if [ "$pin" = 1 ]; then
    for d in /proc/[0-9]*; do
        case "$(cat $d/comm 2>/dev/null)" in
            kswapd*|kcompactd*) taskset -p 2 ${d#/proc/} >/dev/null || fail "taskset $(cat $d/comm)"
                                echo "@@pin $(cat $d/comm) $(taskset -p ${d#/proc/} | sed 's/.*: //')" ;;
        esac
    done
    pinned="taskset 1"
    echo "@@pin workload 1"
fi
# The CPUs' caches as the guest sees them (QEMU's -smp topology): a wake-up looks for an
# idle CPU only among those sharing the waker's last-level cache (select_idle_sibling,
# kernel/sched/fair.c 6.12). "@@cpu_cache CPU LEVEL TYPE SHARED_CPUS".
for c in /sys/devices/system/cpu/cpu[0-9]*; do
    for i in $c/cache/index*; do
        [ -e $i/level ] && echo "@@cpu_cache ${c##*cpu} $(cat $i/level) $(cat $i/type) $(cat $i/shared_cpu_list)"
    done
done
# wl merges consecutive preads into reads of up to 64 KiB only without readahead: with it,
# the request size steers readahead, and the simulator reads 4 KiB per access.
damon_trace prepare
if [ -e /data/program ]; then
    # A real program (python/reclaimlab/programs): /data/program holds its working
    # directory, then its argv, one per line; it runs chrooted in /data/root, which holds
    # its binary, libraries and inputs at the paths it was recorded with.
    { IFS= read -r cwd; set --; while IFS= read -r a; do set -- "$@" "$a"; done; } < /data/program
    mount -o bind /dev /data/root/dev || fail "bind /dev"
    mount -t proc proc /data/root/proc || fail "proc in /data/root"
    WL_REPORT="/init report start" $pinned /wl -x /data/root "$cwd" "${procs#,}" "$tick" "$@"
    rc=$?
elif [ -e /data/thp ]; then
    # A THP/compaction/NUMA workload (guest/thp.c: thpscale, usemem): its own program, in
    # the root cgroup, /data/thp its arguments.
    /init report start || fail "report start"
    $pinned /thp $(cat /data/thp)
    rc=$?
else
    WL_PFNS=$(grep -q 'lab.damon=' /proc/cmdline && echo 1 || echo 0) \
    WL_MERGE=$([ "$ra" = 0 ] && echo 1 || echo 0) WL_REPORT="/init report start" \
        $pinned /wl /data/ops /data/data "${procs#,}" "$tick"
    rc=$?
fi
damon_stop
blkstat end
layout end
wb_sample_end
# DAMON's regions (stopped above).
damon_trace end
[ "$zram" != 0 ] && echo "@@zram_mm_stat $(cat /sys/block/zram0/mm_stat)"
echo "@@exit $rc"
poweroff -f
