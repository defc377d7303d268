/* comm.c -- per-communicator state (struct acis_comm) cached with an MPI
 * attribute: created at first use, freed by the attribute's delete
 * callback when the communicator is freed (MPI_COMM_WORLD's at
 * MPI_Finalize), which also gives its switch row back. */
#include "config.h"

#include <stdlib.h>

#include "commtable.h"

struct acis_commtable_ctx acis_ct = { .keyval = MPI_KEYVAL_INVALID };

static int comm_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    struct acis_comm *cs = val;
    acis_ct_release_row(cs);
    if (cs->off && acis_ct.off_free)
        acis_ct.off_free(cs->off);
    free(cs->granks);
    free(cs);
    return MPI_SUCCESS;
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
    if (acis_ct.keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&acis_ct.keyval);
    free(acis_ct.by_row);
    acis_ct.by_row = NULL;
    acis_ct.rows = 0;
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
    PMPI_Comm_size(comm, &cs->size);
    if (PMPI_Comm_set_attr(comm, acis_ct.keyval, cs) != MPI_SUCCESS) {
        free(cs);
        return NULL;
    }
    return cs;
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
