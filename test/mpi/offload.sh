#!/bin/sh
# offload.sh -- collectives executed in the emulated switch, checked against
# MPICH: every (op, datatype) at 2 ranks and, for allreduce and scan on
# shm, at 4 ranks, a quick matrix of everything at 4 ranks, a few reductions at 8
# ranks (more than cores), the segmentation sizes up to 64 MiB at 2 and 4
# ranks with the switch's counters, a tiny packet and window to stress
# flow control, eager table set-up, and a full communicator table; on
# both channels, shm and udp; on shm with the short path for one-segment
# calls (counted) and without it.  --offloaded names the communicators that
# must have a switch row (from acis_comm_offloaded): a library that
# refused them all fails.
# (About 2.5 minutes, 3 sanitized: the widest test of the data path, every
# op and datatype and sizes to 64 MiB on two channels, at 2, 4 and 8 ranks.)
. "${top_srcdir:-.}/test/mpi/common.sh"

OFF="--offload=$ALL --offload-nb=$ALL"
W2=--offloaded=world,reversed
W4=--offloaded=world,reversed,halves
export MPIR_CVAR_OFFLOAD=on
# persistent forms in the switch too (coll_check runs each: init, start)
export MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=strict
# Under a sanitizer (ACIS_TEST_SANITIZED, Makefile.am) every op and
# datatype runs once, on shm with the short path: the same kernels and
# datatype code again on udp and without the short path would double the
# sanitized run for no new path; those two run the quick matrix there.
FULL_AGAIN=
[ -n "${ACIS_TEST_SANITIZED:-}" ] && FULL_AGAIN=--matrix=quick

for dev in shm udp; do
    export MPIR_CVAR_OFFLOAD_DEVICE=$dev
    note "$dev: 2 ranks, every op and datatype"
    again=$FULL_AGAIN
    [ $dev = shm ] && again=
    run_mpi 2 "$TESTS_DIR/coll_check" $OFF $W2 $again >"$TMPD/out" 2>&1 ||
        { cat "$TMPD/out"; fail "$dev: 2 ranks, full matrix"; }
    cat "$TMPD/out"
    # one-segment blocking calls with buffers used in place take the short
    # path on shm (beside ranks whose datatypes must be packed), never on udp
    if [ $dev = shm ]; then
        grep -q ', [1-9][0-9]* on the short path' "$TMPD/out" || fail "shm: no short path"
        note "shm: 2 ranks, every op and datatype, short path off"
        MPIR_CVAR_OFFLOAD_SHORT_PATH=0 run_mpi 2 "$TESTS_DIR/coll_check" $OFF $W2 $FULL_AGAIN \
            >"$TMPD/out" 2>&1 || { cat "$TMPD/out"; fail "shm: short path off"; }
        cat "$TMPD/out"
    fi
    grep -q ', 0 on the short path' "$TMPD/out" || { cat "$TMPD/out"; fail "$dev: short path"; }
    # the embedded UDP switch hands the answers to the rank that hosts it
    # in place and takes that rank's requests in place (switch.h,
    # acis_udpsw_set_home_answers, acis_udpsw_take); shm has no such switch
    want_home=', 0 answers handed over in place, 0 requests taken in place'
    [ $dev = udp ] &&
        want_home=', [1-9][0-9]* answers handed over in place, [1-9][0-9]* requests taken in place'
    grep -q "$want_home" "$TMPD/out" || fail "$dev: answers and requests in place"
    # every op and datatype at 4 ranks: Allreduce and Scan (the two ways
    # the switch folds four members), since Reduce and Reduce_scatter_block
    # fold in the same switch code and differ from Allreduce only in who
    # gets the answer, which the quick matrix below checks at 4 ranks (and
    # the 2-rank matrix for every op and datatype); count 0 is the 2-rank
    # matrix's: nothing is folded.  On shm only: the folds are the switch
    # core's, the same behind either channel, and udp's 4-rank traffic is
    # the quick matrix's below (the udp run took 49 s of CI).  Not under a
    # sanitizer: the kernels and datatype code are the 2-rank matrix's,
    # and 4 ranks on 2 cores cost the sanitized run three minutes.
    colls=allreduce,scan
    if [ -z "${ACIS_TEST_SANITIZED:-}" ] && [ $dev = shm ]; then
        note "$dev: 4 ranks, every op and datatype for $colls"
        run_mpi 4 "$TESTS_DIR/coll_check" $OFF --colls=$colls --counts=1,1000 $W4 ||
            fail "$dev: 4 ranks, reductions"
    fi
    note "$dev: 4 ranks, quick matrix"
    run_mpi 4 "$TESTS_DIR/coll_check" $OFF --matrix=quick --counts=0,5,5000 $W4 ||
        fail "$dev: 4 ranks"
    note "$dev: 8 ranks (more than cores): a few reductions and broadcasts"
    run_mpi 8 "$TESTS_DIR/coll_check" $OFF --matrix=quick --colls=allreduce,iallreduce,bcast \
        --counts=300 $W4 || fail "$dev: 8 ranks"
    note "$dev: segment sizes up to 64 MiB, 2 and 4 ranks"
    run_mpi 2 "$TESTS_DIR/offload_sizes" || fail "$dev: sizes, 2 ranks"
    run_mpi 4 "$TESTS_DIR/offload_sizes" || fail "$dev: sizes, 4 ranks"
    if [ $dev = udp ]; then
        note "udp: one node, so the embedded switch's packets are 65000 bytes (auto)"
        MPIR_CVAR_OFFLOAD_VERBOSE=1 run_mpi 2 "$TESTS_DIR/offload_sizes" --max 4000000 \
            >"$TMPD/out" 2>&1 || { cat "$TMPD/out"; fail "udp: sizes, auto packets"; }
        grep -q '65000-byte packets' "$TMPD/out" || { cat "$TMPD/out"; fail "udp: auto packets"; }
        note "udp: 16384-byte packets, auto's size across nodes"
        MPIR_CVAR_OFFLOAD_SWITCH_PAYLOAD=16384 run_mpi 4 "$TESTS_DIR/offload_sizes" \
            --max 4000000 || fail "udp: 16384-byte packets"
    fi
    note "$dev: 1000-byte packets, 4 slots per communicator (flow control)"
    MPIR_CVAR_OFFLOAD_SWITCH_PAYLOAD=1000 MPIR_CVAR_OFFLOAD_SWITCH_SLOTS=128 \
        run_mpi 2 "$TESTS_DIR/offload_sizes" --max 4000000 || fail "$dev: small packets"
    # blocks of 700 elements span whole 1000-byte segments: gather and
    # scatter roots keep those at home (counted), on shm too (its own size)
    MPIR_CVAR_OFFLOAD_SWITCH_PAYLOAD=1000 MPIR_CVAR_OFFLOAD_SWITCH_SLOTS=128 \
        MPIR_CVAR_OFFLOAD_SHM_PAYLOAD=1000 \
        run_mpi 4 "$TESTS_DIR/coll_check" $OFF --matrix=quick --counts=1,700 \
        >"$TMPD/out" 2>&1 || { cat "$TMPD/out"; fail "$dev: small packets, 4"; }
    cat "$TMPD/out"
    grep -q ', [1-9][0-9]* roots kept their block' "$TMPD/out" ||
        fail "$dev: no root kept its block"
    note "$dev: eager communicator set-up"
    MPIR_CVAR_OFFLOAD_COMM_SETUP=eager run_mpi 2 "$TESTS_DIR/coll_check" $OFF --matrix=quick ||
        fail "$dev: eager"
    note "$dev: a one-row communicator table: MPI_COMM_WORLD offloads, the others fall back"
    MPIR_CVAR_OFFLOAD_SWITCH_TABLES=1 MPIR_CVAR_OFFLOAD_SWITCH_SLOTS=16 \
        run_mpi 4 "$TESTS_DIR/coll_check" $OFF --matrix=quick --counts=3 --offloaded=world \
        >"$TMPD/out" 2>&1 ||
        { cat "$TMPD/out"; fail "$dev: table full"; }
    cat "$TMPD/out"
done
