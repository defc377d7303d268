/* requests.c -- the MPI request calls acis takes part in, for its
 * persistent collectives (pers.c): MPI_Start and MPI_Startall start them,
 * MPI_Request_free frees them, MPI_Cancel leaves them alone (a collective
 * cannot be cancelled); on its nonblocking calls MPI_Request_free and
 * MPI_Cancel fail as MPICH's do on its own; and every wait and test call, and
 * MPI_Request_get_status, first moves the ones it is given that are
 * still running, then lets MPICH answer as it always does (but
 * MPI_Request_get_status on acis's nonblocking calls, whose poll MPICH
 * does not run there: acis moves and answers those, nbreg.c): the request
 * the user holds is MPICH's.  While no acis persistent request runs or
 * has an error to report (acis_oc.pers.active, .failed), a wait or test
 * call adds two atomic loads in front of MPICH's. */
#include "config.h"

#include "offload.h"

/* Move the started acis requests among r[0..n-1] once (wait_all: each
 * until its collective finished). */
static void move(int n, MPI_Request r[], int wait_all)
{
    for (int i = 0; i < n; i++)
        acis_pers_poll(r[i], wait_all);
}

/* The error a finished acis request reports (once), through its
 * communicator's error handler as MPICH's own do; into its status for the
 * calls that complete several (MPI_ERR_IN_STATUS).  Returns it. */
static int err_of(MPI_Request r, MPI_Status *st)
{
    MPI_Comm comm = MPI_COMM_NULL;
    int err = acis_pers_err(r, &comm);
    if (err == MPI_SUCCESS)
        return err;
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = err;
    return acis_raise(comm, err);
}

/* No acis persistent request is running, and none finished with an
 * error its completion call has yet to report. */
#define PERS_IDLE() (!atomic_load_explicit(&acis_oc.pers.active, memory_order_relaxed) && \
                     !atomic_load_explicit(&acis_oc.pers.failed, memory_order_relaxed))

ACIS_API int MPI_Start(MPI_Request *request)
{
    int rc;
    if (request && acis_pers_start(request, &rc))     /* NULL: MPICH's error */
        return rc;
    return PMPI_Start(request);
}

/* MPICH checks every request before it starts any, so a bad one (a
 * request that is not persistent, or is started and not completed)
 * leaves all of them inactive; acis's requests are MPICH's receives
 * (pers.c), checked and started with the others, their collectives
 * started once all are.  One of acis's twice in the array is refused
 * first (MPI_ERR_REQUEST): MPICH would start its receive twice. */
ACIS_API int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    int rc;
    if (count > 0 && array_of_requests &&
        acis_pers_twice(count, array_of_requests, &rc))
        return rc;
    rc = PMPI_Startall(count, array_of_requests);
    if (rc != MPI_SUCCESS ||
        !atomic_load_explicit(&acis_oc.pers.count, memory_order_relaxed))
        return rc;
    for (int i = 0; i < count; i++)
        acis_pers_started(array_of_requests[i]);
    return MPI_SUCCESS;
}

/* call on r, a nonblocking collective's request: erroneous in MPI (MPI
 * 4.0, 6.12), and MPICH 4.0.2 refuses it on its own such requests with
 * cls (MPI_ERR_OTHER for a free, MPI_ERR_INTERN for a cancel) through
 * MPI_COMM_WORLD's handler, the request left as it was.  acis's are
 * generalized requests to MPICH, which would free or cancel them: refused
 * here the same way, so a program does the same whether acis or MPICH
 * runs its call.  MPICH's message for the bare class says little, so the
 * first refusal says why (the rest only when verbose). */
static int refuse(MPI_Request r, const char *call, int cls)
{
    acis_log(atomic_exchange(&acis_oc.nbreg.refused, 1) ? 1 : 0,
             "%s: request %#x is a nonblocking collective's, which MPI does not let be freed "
             "or cancelled (MPICH refuses its own the same way): left as it was; complete it "
             "with a wait or test call", call, (unsigned)r);
    return acis_raise(MPI_COMM_WORLD, cls);
}

ACIS_API int MPI_Request_free(MPI_Request *request)
{
    int rc;
    if (!request)
        return PMPI_Request_free(request);              /* MPICH's error */
    if (acis_pers_free(request, &rc))
        return rc;
    if (acis_nbreg_has(*request))
        return refuse(*request, "MPI_Request_free", MPI_ERR_OTHER);
    return PMPI_Request_free(request);
}

ACIS_API int MPI_Cancel(MPI_Request *request)
{
    if (!request)
        return PMPI_Cancel(request);                    /* MPICH's error */
    if (acis_pers_poll(*request, 0) >= 0)
        return MPI_SUCCESS;           /* acis's: a collective is not cancelled */
    if (acis_nbreg_has(*request))
        return refuse(*request, "MPI_Cancel", MPI_ERR_INTERN);
    return PMPI_Cancel(request);
}

ACIS_API int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (PERS_IDLE())
        return PMPI_Wait(request, status);
    MPI_Request r = *request;     /* MPICH nulls a request that is not persistent */
    move(1, request, 1);
    int rc = PMPI_Wait(request, status);
    return rc == MPI_SUCCESS ? err_of(r, MPI_STATUS_IGNORE) : rc;
}

ACIS_API int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (PERS_IDLE())
        return PMPI_Test(request, flag, status);
    MPI_Request r = *request;
    move(1, request, 0);
    int rc = PMPI_Test(request, flag, status);
    return rc == MPI_SUCCESS && *flag ? err_of(r, MPI_STATUS_IGNORE) : rc;
}

ACIS_API int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (!PERS_IDLE())
        move(1, &request, 0);
    int rc;
    if (flag && acis_nb_get_status(request, flag, status, &rc))   /* MPICH checks flag */
        return rc;                /* acis's nonblocking call: acis answers */
    return PMPI_Request_get_status(request, flag, status);
}

/* Errors of the acis requests among the n finished ones (indices idx, or
 * all of r when idx is NULL; a persistent request keeps its handle when
 * it completes): MPI_ERR_IN_STATUS with each in its status, or the first
 * error when statuses are ignored. */
static int errs(int n, const MPI_Request r[], const int *idx, MPI_Status st[])
{
    int rc = MPI_SUCCESS;
    MPI_Comm first = MPI_COMM_NULL;
    for (int i = 0; i < n; i++) {
        MPI_Comm comm = MPI_COMM_NULL;
        int err = acis_pers_err(r[idx ? idx[i] : i], &comm);
        if (st != MPI_STATUSES_IGNORE)
            st[i].MPI_ERROR = err;
        if (err == MPI_SUCCESS)
            continue;
        if (rc == MPI_SUCCESS) {
            rc = st == MPI_STATUSES_IGNORE ? err : MPI_ERR_IN_STATUS;
            first = comm;
        }
    }
    return rc == MPI_SUCCESS ? rc : acis_raise(first, rc);   /* once, as MPICH does */
}

ACIS_API int MPI_Waitall(int count, MPI_Request array_of_requests[],
                         MPI_Status array_of_statuses[])
{
    if (PERS_IDLE())
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    move(count, array_of_requests, 1);
    int rc = PMPI_Waitall(count, array_of_requests, array_of_statuses);
    return rc == MPI_SUCCESS ? errs(count, array_of_requests, NULL, array_of_statuses) : rc;
}

ACIS_API int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                         MPI_Status array_of_statuses[])
{
    if (PERS_IDLE())
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    move(count, array_of_requests, 0);
    int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    return rc == MPI_SUCCESS && *flag ? errs(count, array_of_requests, NULL, array_of_statuses) : rc;
}

ACIS_API int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index,
                         MPI_Status *status)
{
    if (PERS_IDLE())
        return PMPI_Waitany(count, array_of_requests, index, status);
    for (;;) {                    /* until one, acis's or MPICH's, is complete */
        int flag, rc;
        move(count, array_of_requests, 0);
        rc = PMPI_Testany(count, array_of_requests, index, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc == MPI_SUCCESS && *index != MPI_UNDEFINED
                       ? err_of(array_of_requests[*index], MPI_STATUS_IGNORE) : rc;
    }
}

ACIS_API int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                         MPI_Status *status)
{
    if (PERS_IDLE())
        return PMPI_Testany(count, array_of_requests, index, flag, status);
    move(count, array_of_requests, 0);
    int rc = PMPI_Testany(count, array_of_requests, index, flag, status);
    return rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED
               ? err_of(array_of_requests[*index], MPI_STATUS_IGNORE) : rc;
}

ACIS_API int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                          int array_of_indices[], MPI_Status array_of_statuses[])
{
    if (PERS_IDLE())
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    for (;;) {
        move(incount, array_of_requests, 0);
        int rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                               array_of_statuses);
        if (rc != MPI_SUCCESS || *outcount != 0)
            return rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED
                       ? errs(*outcount, array_of_requests, array_of_indices, array_of_statuses) : rc;
    }
}

ACIS_API int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                          int array_of_indices[], MPI_Status array_of_statuses[])
{
    if (PERS_IDLE())
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    move(incount, array_of_requests, 0);
    int rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
    return rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && *outcount > 0
               ? errs(*outcount, array_of_requests, array_of_indices, array_of_statuses) : rc;
}
