#!/bin/busybox sh
# /init of reclaimlab's guest (python/reclaimlab/kernel/initramfs.py packs it).
# Configures the machine from lab.* kernel parameters, runs /wl in cgroup "wl" with
# memory.max, prints "@@" lines on the serial console and powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t cgroup2 none /sys/fs/cgroup
mount -t debugfs none /sys/kernel/debug
fail() { echo "@@error $*"; poweroff -f; }

mglru=keep; memmax=max; zram=0; swappiness=keep; wsf=keep; minfree=keep; tick=0
for x in $(cat /proc/cmdline); do
    case "$x" in
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
# THP off (the simulator has base pages only); fault-around off, so that a mapped fault
# maps (and marks young) one page, as in the simulator.
echo never > /sys/kernel/mm/transparent_hugepage/enabled
echo 4096 > /sys/kernel/debug/fault_around_bytes 2>/dev/null || echo "@@warn fault_around_bytes not set"

# The kernel's own module requests (crypto-crc32c from ext4, ...) call /sbin/modprobe.
mkdir -p /sbin && ln -s /bin/modprobe /sbin/modprobe
modprobe virtio_pci 2>/dev/null
modprobe crc32c_generic 2>/dev/null
modprobe virtio_blk || fail "modprobe virtio_blk"
modprobe ext4 || fail "modprobe ext4"
i=0
while [ ! -b /dev/vda ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
# No readahead and no mmap read-around: every page read is one the workload asked for, as
# in the simulator (which has no readahead). This, not MADV_RANDOM, is how the mapping
# avoids read-around: MADV_RANDOM would also make reclaim ignore the mapping's accessed
# bits (vma_has_recency()).
echo 0 > /sys/block/vda/queue/read_ahead_kb || fail "read_ahead_kb"
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
grep -E '^(MemTotal|MemFree|Cached|Shmem):' /proc/meminfo | while read -r k v u; do echo "@@meminfo ${k%:} $v"; done

echo +memory > /sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/wl
echo "$memmax" > /sys/fs/cgroup/wl/memory.max || fail "memory.max"
echo "@@memory.max $(cat /sys/fs/cgroup/wl/memory.max)"
sync; echo 3 > /proc/sys/vm/drop_caches
/wl /data/ops /data/data /sys/fs/cgroup/wl/cgroup.procs "$tick"
rc=$?
while read -r k v; do echo "@@memory.events $k $v"; done < /sys/fs/cgroup/wl/memory.events
echo "@@memory.peak $(cat /sys/fs/cgroup/wl/memory.peak 2>/dev/null)"
[ "$zram" != 0 ] && echo "@@zram_mm_stat $(cat /sys/block/zram0/mm_stat)"
echo "@@exit $rc"
poweroff -f
