/* comm.c -- per-communicator state (struct acis_comm) cached with an MPI
 * attribute: created at first use, reference counted so that nonblocking
 * calls still in flight when the user frees the communicator keep it.
 * When the attribute is deleted (MPI_Comm_free; MPI_COMM_WORLD's at
 * MPI_Finalize) a communicator without a switch row is freed at once; one
 * with a row waits on acis_ct.closing until no call uses it and every
 * member has said so (an MPICH Ibarrier on its private dup), then rank 0
 * gives the row back: a member still repeating a lost packet finds it. */
#include "config.h"

#include <stdlib.h>

#include "commtable.h"

static void destroy(struct acis_comm *cs)
{
    acis_ct_drop_off(cs);               /* out of every thread's sight, then freed */
    acis_ct_release_row(cs);
    if (cs->shadow != MPI_COMM_NULL)
        PMPI_Comm_free(&cs->shadow);
    free(cs->granks);
    free(cs);
}

void acis_comm_hold(struct acis_comm *cs)
{
    atomic_fetch_add(&cs->refs, 1);
}

void acis_comm_drop(struct acis_comm *cs)
{
    atomic_fetch_sub(&cs->refs, 1);     /* acis_comm_reap frees it */
}

MPI_Comm acis_comm_handle(const struct acis_comm *cs)
{
    return cs->comm != MPI_COMM_NULL ? cs->comm : cs->shadow;
}

static int comm_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    struct acis_comm *cs = val;
    if (acis_ct.last == cs)
        acis_ct.last = NULL;            /* before the handle can be reused */
    if (cs->shadow == MPI_COMM_NULL && atomic_load(&cs->refs) <= 1) {
        destroy(cs);                    /* no row, no call in flight */
        return MPI_SUCCESS;
    }
    cs->comm = MPI_COMM_NULL;
    atomic_fetch_sub(&cs->refs, 1);     /* the attribute's */
    cs->fin = MPI_REQUEST_NULL;
    pthread_mutex_lock(&acis_ct.closing_lock);
    cs->closing = 1;
    cs->next_closing = acis_ct.closing;
    acis_ct.closing = cs;
    atomic_fetch_add(&acis_ct.nclosing, 1);
    pthread_mutex_unlock(&acis_ct.closing_lock);
    return MPI_SUCCESS;
}

/* Start the Ibarrier of a communicator no call uses any more; 1 when it is
 * done (wait: wait for it). */
static int closed(struct acis_comm *cs, int wait)
{
    if (atomic_load(&cs->refs) > 0)
        return 0;
    if (cs->shadow == MPI_COMM_NULL)
        return 1;
    if (cs->fin == MPI_REQUEST_NULL && cs->closing == 1) {
        PMPI_Ibarrier(cs->shadow, &cs->fin);
        cs->closing = 2;
    }
    if (!wait)
        return 0;
    PMPI_Wait(&cs->fin, MPI_STATUS_IGNORE);
    return 1;
}

void acis_comm_reap(int wait)
{
    if (!atomic_load(&acis_ct.nclosing))
        return;
    pthread_mutex_lock(&acis_ct.closing_lock);
    for (struct acis_comm *cs = acis_ct.closing; cs; cs = cs->next_closing)
        closed(cs, 0);                  /* every Ibarrier started before any wait */
    for (struct acis_comm **pp = &acis_ct.closing; *pp;) {
        struct acis_comm *cs = *pp;
        int done = closed(cs, wait);
        if (!done && cs->closing == 2) {
            int flag = 0;
            PMPI_Test(&cs->fin, &flag, MPI_STATUS_IGNORE);
            done = flag;
        }
        if (done) {
            *pp = cs->next_closing;
            atomic_fetch_sub(&acis_ct.nclosing, 1);
            destroy(cs);
        } else {
            pp = &cs->next_closing;
        }
    }
    pthread_mutex_unlock(&acis_ct.closing_lock);
}

int acis_commtable_init(uint32_t rows)
{
    acis_ct.rows = rows;
    if (rows && !(acis_ct.by_row = calloc(rows, sizeof *acis_ct.by_row)))
        return -1;
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete,
                                   &acis_ct.keyval, NULL) == MPI_SUCCESS ? 0 : -1;
}

int acis_commtable_resize(uint32_t rows)
{
    if (rows <= acis_ct.rows)
        return 0;
    struct acis_comm **b = realloc(acis_ct.by_row, rows * sizeof *b);
    if (!b)
        return -1;
    for (uint32_t r = acis_ct.rows; r < rows; r++)
        b[r] = NULL;
    acis_ct.by_row = b;
    acis_ct.rows = rows;
    return 0;
}

void acis_commtable_finalize(void)
{
    acis_ct.last = NULL;
    if (acis_ct.keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&acis_ct.keyval);
    free(acis_ct.by_row);
    acis_ct.by_row = NULL;
    acis_ct.rows = 0;
}

/* comm's state if it has one (its attribute), else NULL. */
static struct acis_comm *find(MPI_Comm comm)
{
    void *val;
    int found = 0;
    if (acis_ct.keyval == MPI_KEYVAL_INVALID ||
        PMPI_Comm_get_attr(comm, acis_ct.keyval, &val, &found) != MPI_SUCCESS || !found)
        return NULL;
    return val;
}

struct acis_comm *acis_comm_get(MPI_Comm comm)
{
    if (acis_ct.keyval == MPI_KEYVAL_INVALID)
        return NULL;
    struct acis_comm *last = acis_ct.last;
    if (last && last->comm == comm && !acis_ct.threaded)
        return last;                    /* the same communicator as last time */
    struct acis_comm *cs = find(comm);
    if (cs) {
        if (!acis_ct.threaded)
            acis_ct.last = cs;
        return cs;
    }
    cs = calloc(1, sizeof *cs);
    if (!cs)
        return NULL;
    cs->comm = comm;
    cs->shadow = MPI_COMM_NULL;
    cs->fin = MPI_REQUEST_NULL;
    atomic_init(&cs->refs, 1);
    PMPI_Comm_test_inter(comm, &cs->inter);
    PMPI_Comm_rank(comm, &cs->rank);
    PMPI_Comm_size(comm, &cs->size);
    if (PMPI_Comm_set_attr(comm, acis_ct.keyval, cs) != MPI_SUCCESS) {
        free(cs);
        return NULL;
    }
    return cs;
}

void acis_comm_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
    struct acis_comm *cs = find(comm);  /* none made here: no state, no dup */
    if (cs && cs->shadow != MPI_COMM_NULL)
        PMPI_Comm_set_errhandler(cs->shadow, eh);
}

struct acis_comm *acis_comm_by_ctx(uint32_t ctx)
{
    uint32_t row = (ctx & 0xffff) - 1;
    if (row >= acis_ct.rows || !acis_ct.by_row[row] || acis_ct.by_row[row]->ctx != ctx)
        return NULL;
    return acis_ct.by_row[row];
}

void acis_comm_release(MPI_Comm comm)
{
    void *val;
    int found = 0;
    if (acis_ct.keyval != MPI_KEYVAL_INVALID &&
        PMPI_Comm_get_attr(comm, acis_ct.keyval, &val, &found) == MPI_SUCCESS && found)
        PMPI_Comm_delete_attr(comm, acis_ct.keyval);
}
