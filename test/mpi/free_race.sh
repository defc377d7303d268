#!/bin/sh
# free_race.sh -- communicators freed while answers for them are still
# being delivered (free_race): on UDP with every packet of every rank and
# of the switch sent 20 ms late, so each collective's repeats are answered
# again after it finished, and a 100 ms pause right after a rank frees a
# communicator's offload state (MPIR_CVAR_OFFLOAD_FAULT_FREE_MS), during
# which another thread (--mode=threads, 2 ranks) or the progress helper
# (--mode=helper, 2 and 3 ranks) takes those late answers.  Before the fix
# the state was freed while the communicator's row still led to it: the
# sanitized builds reported a use after free in the engine's deliver().
# Then communicators whose collectives the members finished after
# acis-switchd was killed, freed (with the same pause) while another
# thread's collectives are being finished too (--mode=recovery, 2 ranks;
# before the fix ThreadSanitizer reported the unlocked update of the count
# of communicators in recovery).  Results must be MPICH's, every call
# offloaded (before the kill), the failure seen once, nothing unfinished.
. "${top_srcdir:-.}/test/mpi/common.sh"
T=${ACIS_TEST_TIMEOUT:-120}
prog="$TESTS_DIR/free_race"
late="MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_DEVICE=udp MPIR_CVAR_OFFLOAD_FAULT_DELAY=1
      MPIR_CVAR_OFFLOAD_FAULT_DELAY_US=20000 MPIR_CVAR_OFFLOAD_FAULT_FREE_MS=100"

note "communicators freed while another thread delivers, 2 ranks"
ACIS_TEST_TIMEOUT=$T run_mpi 2 env $late "$prog" --mode=threads ||
    fail "free_race threads, 2 ranks"
for np in 2 3; do
    note "communicators freed while the progress helper delivers, $np ranks"
    ACIS_TEST_TIMEOUT=$T run_mpi $np env $late "$prog" --mode=helper ||
        fail "free_race helper, $np ranks"
done

addr=$(start_switchd r --listen 127.0.0.1:0) || fail "acis-switchd did not start"
note "communicators in recovery freed while another thread recovers, 2 ranks"
ACIS_TEST_SWITCH_PID=$(cat "$TMPD/swr.pid") MPIR_CVAR_OFFLOAD=on \
    MPIR_CVAR_OFFLOAD_SWITCH=$addr MPIR_CVAR_OFFLOAD_TIMEOUT_MS=1000 \
    MPIR_CVAR_OFFLOAD_REJOIN=never MPIR_CVAR_OFFLOAD_FAULT_FREE_MS=100 \
    ACIS_TEST_TIMEOUT=$T run_mpi 2 "$prog" --mode=recovery ||
    fail "free_race recovery, 2 ranks"
