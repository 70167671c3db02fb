#!/bin/busybox sh
# /init of reclaimlab's guest (python/reclaimlab/kernel/initramfs.py packs it).
# Configures the machine from lab.* kernel parameters, runs /wl in cgroup "wl" with
# memory.max, prints "@@" lines on the serial console and powers off.
# "/init report WHEN" only prints the memory layout (wl runs it just before the workload).

# The memory layout, tagged WHEN (boot, start): per zone of /proc/zoneinfo one line
# "@@zone WHEN NODE ZONE free=.. min=.. low=.. high=.. spanned=.. present=.. managed=..
# protection=a,b,.." (pages), then "@@meminfo WHEN KEY KB" and "@@min_free_kbytes WHEN N".
report() {
    awk -v when="$1" '
        function flush() { if (zone != "") print "@@zone", when, node, zone, line }
        $1 == "Node" { flush(); node = $2; sub(/,/, "", node); zone = $4; line = "" }
        $1 == "pages" && $2 == "free" { line = line " free=" $3 }
        $1 ~ /^(min|low|high|spanned|present|managed)$/ && NF == 2 { line = line " " $1 "=" $2 }
        $1 == "protection:" { p = $0; sub(/.*\(/, "", p); sub(/\).*/, "", p); gsub(/ /, "", p); line = line " protection=" p }
        END { flush() }' /proc/zoneinfo
    grep -E '^(MemTotal|MemFree|MemAvailable|Cached|Shmem|Mlocked|Slab|PageTables|KernelStack|AnonPages):' /proc/meminfo |
        while read -r k v u; do echo "@@meminfo $1 ${k%:} $v"; done
    echo "@@min_free_kbytes $1 $(cat /proc/sys/vm/min_free_kbytes)"
}
if [ "$1" = report ]; then
    report "$2"
    exit 0
fi

/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t cgroup2 none /sys/fs/cgroup
mount -t debugfs none /sys/kernel/debug
fail() { echo "@@error $*"; poweroff -f; }

mglru=keep; memmax=max; zram=0; swappiness=keep; wsf=keep; minfree=keep; tick=0
ra=keep; fab=keep; thp=keep
for x in $(cat /proc/cmdline); do
    case "$x" in
        lab.ra=*) ra=${x#lab.ra=} ;;
        lab.fab=*) fab=${x#lab.fab=} ;;
        lab.thp=*) thp=${x#lab.thp=} ;;
        lab.mglru=*) mglru=${x#lab.mglru=} ;;
        lab.memmax=*) memmax=${x#lab.memmax=} ;;
        lab.zram=*) zram=${x#lab.zram=} ;;
        lab.swappiness=*) swappiness=${x#lab.swappiness=} ;;
        lab.wsf=*) wsf=${x#lab.wsf=} ;;
        lab.minfree=*) minfree=${x#lab.minfree=} ;;
        lab.tick=*) tick=${x#lab.tick=} ;;
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
mount -t ext4 -o ro,noload /dev/vda /data || fail "mount /dev/vda"

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
for k in min_free_kbytes watermark_scale_factor swappiness; do echo "@@sysctl $k $(cat /proc/sys/vm/$k)"; done

echo +memory > /sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/wl
echo "$memmax" > /sys/fs/cgroup/wl/memory.max || fail "memory.max"
echo "@@memory.max $(cat /sys/fs/cgroup/wl/memory.max)"
sync; echo 3 > /proc/sys/vm/drop_caches
# wl merges consecutive preads into reads of up to 64 KiB only without readahead: with it,
# the request size steers readahead, and the simulator reads 4 KiB per access.
WL_MERGE=$([ "$ra" = 0 ] && echo 1 || echo 0) WL_REPORT="/init report start" \
    /wl /data/ops /data/data /sys/fs/cgroup/wl/cgroup.procs "$tick"
rc=$?
while read -r k v; do echo "@@memory.events $k $v"; done < /sys/fs/cgroup/wl/memory.events
echo "@@memory.peak $(cat /sys/fs/cgroup/wl/memory.peak 2>/dev/null)"
[ "$zram" != 0 ] && echo "@@zram_mm_stat $(cat /sys/block/zram0/mm_stat)"
echo "@@exit $rc"
poweroff -f
