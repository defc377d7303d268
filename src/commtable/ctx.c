/* ctx.c -- the commtable layer's one context struct (commtable.h says
 * what each field is and which lock guards it), defined apart from the
 * files that use it, so comm.c and ct.c each depend on it and not on one
 * another both ways. */
#include "config.h"

#include "commtable.h"

struct acis_commtable_ctx acis_ct = { .keyval = MPI_KEYVAL_INVALID,
                                      .closing_lock = PTHREAD_MUTEX_INITIALIZER };
