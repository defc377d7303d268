/* comm.c -- per-communicator state (struct acis_comm) cached with an MPI
 * attribute: created at first use, freed by the attribute's delete
 * callback when the communicator is freed (MPI_COMM_WORLD's at
 * MPI_Finalize). */
#include "config.h"

#include <stdlib.h>

#include "commtable.h"

struct acis_commtable_ctx acis_ct = { .keyval = MPI_KEYVAL_INVALID };

static int comm_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    free(val);
    return MPI_SUCCESS;
}

int acis_commtable_init(void)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete,
                                   &acis_ct.keyval, NULL) == MPI_SUCCESS ? 0 : -1;
}

void acis_commtable_finalize(void)
{
    if (acis_ct.keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&acis_ct.keyval);
}

struct acis_comm *acis_comm_get(MPI_Comm comm)
{
    void *val;
    int found = 0;
    if (acis_ct.keyval == MPI_KEYVAL_INVALID)
        return NULL;
    if (PMPI_Comm_get_attr(comm, acis_ct.keyval, &val, &found) == MPI_SUCCESS && found)
        return val;
    struct acis_comm *cs = calloc(1, sizeof *cs);
    if (!cs)
        return NULL;
    cs->comm = comm;
    PMPI_Comm_test_inter(comm, &cs->inter);
    PMPI_Comm_rank(comm, &cs->rank);
    if (cs->inter)
        PMPI_Comm_remote_size(comm, &cs->size);
    else
        PMPI_Comm_size(comm, &cs->size);
    if (PMPI_Comm_set_attr(comm, acis_ct.keyval, cs) != MPI_SUCCESS) {
        free(cs);
        return NULL;
    }
    return cs;
}

void acis_comm_release(MPI_Comm comm)
{
    void *val;
    int found = 0;
    if (acis_ct.keyval != MPI_KEYVAL_INVALID &&
        PMPI_Comm_get_attr(comm, acis_ct.keyval, &val, &found) == MPI_SUCCESS && found)
        PMPI_Comm_delete_attr(comm, acis_ct.keyval);
}
