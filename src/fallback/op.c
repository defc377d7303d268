/* op.c -- the wire code of a predefined MPI reduction operation; user-defined
 * operations have none and always run in software. */
#include "config.h"

#include "fallback.h"

int acis_op_wire(MPI_Op op)
{
    static const struct { MPI_Op op; int wop; } ops[] = {
        { MPI_SUM, ACIS_OP_SUM },       { MPI_MAX, ACIS_OP_MAX },
        { MPI_MIN, ACIS_OP_MIN },       { MPI_PROD, ACIS_OP_PROD },
        { MPI_LAND, ACIS_OP_LAND },     { MPI_LOR, ACIS_OP_LOR },
        { MPI_LXOR, ACIS_OP_LXOR },     { MPI_BAND, ACIS_OP_BAND },
        { MPI_BOR, ACIS_OP_BOR },       { MPI_BXOR, ACIS_OP_BXOR },
        { MPI_MINLOC, ACIS_OP_MINLOC }, { MPI_MAXLOC, ACIS_OP_MAXLOC },
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].op == op)
            return ops[i].wop;
    return ACIS_OP_NONE;
}
