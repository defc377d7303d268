/* shm.c -- the shared-memory channel (MPIR_CVAR_OFFLOAD_DEVICE=shm).  Not
 * in this version: opening it fails with a one-line reason, so the job
 * runs its collectives in MPICH and says why at MPIR_CVAR_OFFLOAD_VERBOSE=1. */
#include "config.h"

#include <stdio.h>

#include "mpid/channel.h"

static int shm_open_(struct acis_chan **ch, const char *addr, char *why, size_t whylen)
{
    (void)ch;
    (void)addr;
    snprintf(why, whylen, "the shared-memory channel is not available in this "
                          "version of acis (use MPIR_CVAR_OFFLOAD_DEVICE=udp)");
    return -1;
}

const struct acis_chan_ops acis_chan_shm = { .name = "shm", .open = shm_open_ };
