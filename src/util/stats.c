/* stats.c -- snapshots of the per-collective and host counters kept in
 * acis_util, for the public acis_get_stats() API and the finalize table. */
#include "config.h"

#include <string.h>

#include "util.h"

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

void acis_stats_snapshot(acis_coll_t coll, struct acis_coll_stats *out)
{
    const struct acis_coll_counters *c = &acis_util.coll[coll];
    memset(out, 0, sizeof *out);
    out->offloaded = LOAD(c->offloaded);
    out->bytes = LOAD(c->bytes);
    out->offloaded_bytes = LOAD(c->offloaded_bytes);
    for (int r = 1; r < ACIS_REASON_COUNT; r++) {
        out->by_reason[r] = LOAD(c->by_reason[r]);
        out->software += out->by_reason[r];
    }
    out->calls = out->offloaded + out->software;
}

void acis_host_snapshot(struct acis_host_stats *out)
{
    const struct acis_host_counters *h = &acis_util.host;
    out->packets_sent = LOAD(h->packets_sent);
    out->packets_received = LOAD(h->packets_received);
    out->bytes_sent = LOAD(h->bytes_sent);
    out->bytes_received = LOAD(h->bytes_received);
    out->packets_dropped = LOAD(h->packets_dropped);
    out->comms_offloaded = LOAD(h->comms_offloaded);
    out->comms_refused = LOAD(h->comms_refused);
    out->retransmits = LOAD(h->retransmits);
    out->switch_failures = LOAD(h->switch_failures);
    out->recovered = LOAD(h->recovered);
    out->peer_segments = LOAD(h->peer_segments);
    out->peer_served = LOAD(h->peer_served);
    out->redone = LOAD(h->redone);
    out->hier_calls = LOAD(h->hier_calls);
    out->helper_rounds = LOAD(h->helper_rounds);
    out->abstained = LOAD(h->abstained);
    out->recovery_failed = LOAD(h->recovery_failed);
    out->short_path = LOAD(h->short_path);
    out->early_return = LOAD(h->early_return);
    out->own_block = LOAD(h->own_block);
    out->packets_foreign = LOAD(h->packets_foreign);
    out->persistent_starts = LOAD(h->persistent_starts);
    out->quick_path = LOAD(h->quick_path);
    out->home_answers = LOAD(h->home_answers);
    out->home_requests = LOAD(h->home_requests);
}

void acis_stats_zero(void)
{
    for (int i = 0; i < ACIS_COLL_COUNT; i++) {
        struct acis_coll_counters *c = &acis_util.coll[i];
        atomic_store(&c->offloaded, 0);
        atomic_store(&c->bytes, 0);
        atomic_store(&c->offloaded_bytes, 0);
        for (int r = 0; r < ACIS_REASON_COUNT; r++)
            atomic_store(&c->by_reason[r], 0);
    }
    struct acis_host_counters *h = &acis_util.host;
    atomic_store(&h->packets_sent, 0);
    atomic_store(&h->packets_received, 0);
    atomic_store(&h->bytes_sent, 0);
    atomic_store(&h->bytes_received, 0);
    atomic_store(&h->packets_dropped, 0);
    atomic_store(&h->retransmits, 0);
    atomic_store(&h->short_path, 0);
    atomic_store(&h->early_return, 0);
    atomic_store(&h->own_block, 0);
    atomic_store(&h->packets_foreign, 0);
    atomic_store(&h->persistent_starts, 0);
    atomic_store(&h->quick_path, 0);
    atomic_store(&h->home_answers, 0);
    atomic_store(&h->home_requests, 0);
}
