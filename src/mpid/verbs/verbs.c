/* verbs.c -- the libibverbs channel (MPIR_CVAR_OFFLOAD_DEVICE=verbs).
 * Opening looks for RDMA devices; with none (this project's test
 * machines) it fails with a one-line reason and the job runs its
 * collectives in MPICH.  The RDMA data path itself is not in this version,
 * so with devices present it fails too, saying so. */
#include "config.h"

#include <stdio.h>

#include "mpid/channel.h"
#include "mpid/device.h"

#ifdef ACIS_HAVE_VERBS
#include <infiniband/verbs.h>
#endif

int acis_verbs_devices(char *names, size_t len)
{
#ifdef ACIS_HAVE_VERBS
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    size_t off = 0;
    if (names && len)
        names[0] = '\0';
    for (int i = 0; list && i < n && names && off < len; i++)
        off += (size_t)snprintf(names + off, len - off, "%s%s", i ? "," : "",
                                ibv_get_device_name(list[i]));
    if (list)
        ibv_free_device_list(list);
    return list ? n : 0;
#else
    (void)names;
    (void)len;
    return -1;
#endif
}

static int verbs_open(struct acis_chan **ch, const char *addr, char *why, size_t whylen)
{
    char names[256];
    (void)ch;
    (void)addr;
    int n = acis_verbs_devices(names, sizeof names);
    if (n < 0)
        snprintf(why, whylen, "this acis was built without libibverbs (--with-verbs)");
    else if (n == 0)
        snprintf(why, whylen, "verbs: no RDMA device found");
    else
        snprintf(why, whylen, "verbs: %d RDMA device(s) (%s), but the verbs data path "
                              "is not in this version of acis", n, names);
    return -1;
}

const struct acis_chan_ops acis_chan_verbs = { .name = "verbs", .open = verbs_open };
