/* run.c -- dispatch an offloaded call to its collective driver.  The driver
 * table is the single source of which entry points acis can run in the
 * switch: acis_run_init() publishes it to src/fallback, so a call is never
 * selected for offload without a driver to run it. */
#include "config.h"

#include <stdlib.h>

#include "offload.h"
#include "util/util.h"

typedef int (*acis_driver)(struct acis_call *c);

static const acis_driver drivers[ACIS_COLL_COUNT] = {
    [ACIS_COLL_BARRIER] = NULL,
};

void acis_run_init(void)
{
    for (int i = 0; i < ACIS_COLL_COUNT; i++)
        acis_fb.implemented[i] = drivers[i] != NULL;
}

int acis_offload_run(struct acis_call *c)
{
    acis_driver d = drivers[c->coll];
    if (!d) {
        acis_log(0, "internal error: %s selected for offload without a driver",
                 acis_coll_name(c->coll));
        abort();
    }
    return d(c);
}
