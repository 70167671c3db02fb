/* /proc/vmstat snapshots, for wl.c and thp.c (each defines its own die()). */
#ifndef RECLAIMLAB_VMSTAT_H
#define RECLAIMLAB_VMSTAT_H

#include <stdio.h>

#define MAXC 512

struct vm { int n; char name[MAXC][48]; unsigned long long val[MAXC]; };

static void die(const char *what);

static void read_vmstat(struct vm *v) {
    FILE *f = fopen("/proc/vmstat", "r");
    if (!f) die("/proc/vmstat");
    v->n = 0;
    while (v->n < MAXC && fscanf(f, "%47s %llu", v->name[v->n], &v->val[v->n]) == 2) v->n++;
    fclose(f);
}

#endif
