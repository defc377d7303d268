/* busy.h -- computing for a given time, as an application does between
 * collectives (bench/subcomm, bench/jitter): a floating-point loop that
 * checks MPI_Wtime, so it neither sleeps nor yields its core. */
#ifndef ACIS_BENCH_BUSY_H
#define ACIS_BENCH_BUSY_H

#include <mpi.h>

static inline void compute(double us)
{
    double end = MPI_Wtime() + us * 1e-6;
    volatile double x = 1;
    while (MPI_Wtime() < end)
        x = x * 1.0000001 + 1e-9;
}

#endif
