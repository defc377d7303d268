/* log.c -- one-line messages to stderr, prefixed with the world rank and
 * filtered by MPIR_CVAR_OFFLOAD_VERBOSE.  A single fprintf per message keeps
 * lines from different ranks whole. */
#include "config.h"

#include <stdio.h>

#include "util.h"

void acis_log(int level, const char *fmt, ...)
{
    if (level > acis_util.verbose)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (acis_util.rank >= 0)
        fprintf(stderr, "acis[%d]: %s\n", acis_util.rank, line);
    else
        fprintf(stderr, "acis: %s\n", line);
}
