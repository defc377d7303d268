/* ctx.c -- the one context of the util layer (struct acis_util_ctx in
 * util.h): parsed CVARs, the rank used in log prefixes, and the counters. */
#include "config.h"

#include "util.h"

struct acis_util_ctx acis_util = { .rank = -1 };
