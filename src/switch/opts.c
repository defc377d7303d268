/* opts.c -- switch options by name, so acis-switchd's command line and the
 * embedded switch accept the same words with the same checks. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switch.h"

int acis_sw_opt_set(struct acis_sw_opts *o, const char *name, const char *value,
                    char *err, size_t errlen)
{
    static const struct { const char *name; size_t off; unsigned long lo, hi; } nums[] = {
        { "ports", offsetof(struct acis_sw_opts, ports), 1, 65535 },
        { "tables", offsetof(struct acis_sw_opts, tables), 1, 65535 },
        { "slots", offsetof(struct acis_sw_opts, slots), 1, 1u << 26 },
        { "pool", offsetof(struct acis_sw_opts, pool), 0, 1u << 31 },
        { "hold", offsetof(struct acis_sw_opts, hold), 0, 65535 },
        { "setups", offsetof(struct acis_sw_opts, setups), 0, 65535 },
        { "payload", offsetof(struct acis_sw_opts, payload), ACIS_MIN_PAYLOAD, ACIS_MAX_PAYLOAD },
        { "job-rows", offsetof(struct acis_sw_opts, job_rows), 1, 65535 },
        { "job-ports", offsetof(struct acis_sw_opts, job_ports), 1, 65535 },
        { "links", offsetof(struct acis_sw_opts, links), 0, 65535 },
        { "jobs", offsetof(struct acis_sw_opts, jobs), 1, 65536 },
        { "link-ns", offsetof(struct acis_sw_opts, link_ns), 0, 100000000 },
        { "link-mbps", offsetof(struct acis_sw_opts, link_mbps), 0, 100000000 },
        { "hop-ns", offsetof(struct acis_sw_opts, hop_ns), 0, 100000000 },
    };
    if (strncmp(name, "fault-", 6) == 0) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = value && *value ? strtoull(value, &end, 10) : 0;
        int num = value && *value && !*end && !errno && value[0] != '-';
        if (strcmp(name, "fault-seed") == 0 || strcmp(name, "fault-delay-us") == 0) {
            int seed = name[6] == 's';
            if (!num || (!seed && v > 10000000ull)) {
                snprintf(err, errlen, "--%s takes %s, not '%s'", name,
                         seed ? "a non-negative integer" : "microseconds in 0..10000000",
                         value ? value : "");
                return -1;
            }
            if (seed)
                o->fault_seed = v;
            else
                o->faults.delay_ns = v * 1000;
            return 0;
        }
        if (value && acis_fault_opt(&o->faults, name + 6, value) == 0)
            return 0;
        snprintf(err, errlen, "--%s takes a fraction or percentage (0.05, 5%%), not '%s'",
                 name, value ? value : "");
        return -1;
    }
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        if (strcmp(name, nums[i].name) != 0)
            continue;
        char *end;
        errno = 0;
        unsigned long v = value ? strtoul(value, &end, 10) : 0;
        if (!value || !*value || *end || errno || v < nums[i].lo || v > nums[i].hi) {
            snprintf(err, errlen, "--%s takes an integer in %lu..%lu, not '%s'", name,
                     nums[i].lo, nums[i].hi, value ? value : "");
            return -1;
        }
        *(uint32_t *)((char *)o + nums[i].off) = (uint32_t)v;
        return 0;
    }
    snprintf(err, errlen, "unknown switch option --%s", name);
    return -1;
}
