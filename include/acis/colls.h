/* colls.h -- the list of MPI entry points acis intercepts, as an X-macro.
 *
 * ACIS_COLL(id, name, base): id is the enum suffix (ACIS_COLL_<id>), name the
 * MPI function, base the blocking collective whose
 * MPIR_CVAR_OFFLOAD_<base> variable governs it.  Include with ACIS_COLL
 * defined; the header undefines nothing and has no include guard on
 * purpose. */
ACIS_COLL(BARRIER,              "MPI_Barrier",              BARRIER)
ACIS_COLL(BCAST,                "MPI_Bcast",                BCAST)
ACIS_COLL(REDUCE,               "MPI_Reduce",               REDUCE)
ACIS_COLL(ALLREDUCE,            "MPI_Allreduce",            ALLREDUCE)
ACIS_COLL(GATHER,               "MPI_Gather",               GATHER)
ACIS_COLL(SCATTER,              "MPI_Scatter",              SCATTER)
ACIS_COLL(ALLGATHER,            "MPI_Allgather",            ALLGATHER)
ACIS_COLL(REDUCE_SCATTER,       "MPI_Reduce_scatter",       REDUCE_SCATTER)
ACIS_COLL(REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block", REDUCE_SCATTER_BLOCK)
ACIS_COLL(SCAN,                 "MPI_Scan",                 SCAN)
ACIS_COLL(EXSCAN,               "MPI_Exscan",               EXSCAN)
ACIS_COLL(IBARRIER,             "MPI_Ibarrier",             BARRIER)
ACIS_COLL(IBCAST,               "MPI_Ibcast",               BCAST)
ACIS_COLL(IREDUCE,              "MPI_Ireduce",              REDUCE)
ACIS_COLL(IALLREDUCE,           "MPI_Iallreduce",           ALLREDUCE)
ACIS_COLL(IGATHER,              "MPI_Igather",              GATHER)
ACIS_COLL(ISCATTER,             "MPI_Iscatter",             SCATTER)
ACIS_COLL(IALLGATHER,           "MPI_Iallgather",           ALLGATHER)
ACIS_COLL(IREDUCE_SCATTER,      "MPI_Ireduce_scatter",      REDUCE_SCATTER)
ACIS_COLL(IREDUCE_SCATTER_BLOCK, "MPI_Ireduce_scatter_block", REDUCE_SCATTER_BLOCK)
ACIS_COLL(ISCAN,                "MPI_Iscan",                SCAN)
ACIS_COLL(IEXSCAN,              "MPI_Iexscan",              EXSCAN)
