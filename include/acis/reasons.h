/* reasons.h -- why a collective call ran in software, as an X-macro.
 *
 * ACIS_REASON(id, text): id is the enum suffix (ACIS_REASON_<id>; its
 * lower-case form is the stable name tests and tools use), text the line
 * shown with MPIR_CVAR_OFFLOAD_VERBOSE.  NONE must stay first: it means the
 * call was offloaded.  No include guard on purpose. */
ACIS_REASON(NONE,            "offloaded to the switch")
ACIS_REASON(INVALID,         "invalid arguments: left to MPICH to report")
ACIS_REASON(DISABLED,        "offload disabled by MPIR_CVAR_OFFLOAD=off")
ACIS_REASON(COLL_DISABLED,   "this collective disabled by its MPIR_CVAR_OFFLOAD_<COLLECTIVE>=off")
ACIS_REASON(NO_DEVICE,       "no offload device: the switch could not be reached at MPI_Init on some rank")
ACIS_REASON(NOT_OFFLOADABLE, "this collective is not executed in the switch by this version of acis")
ACIS_REASON(NONBLOCKING,     "nonblocking form not offloaded by this version of acis")
ACIS_REASON(PERSISTENT,      "persistent collectives may start in any order here (MPI-4.0): assert mpi_assert_strict_persistent_collective_ordering on the communicator, or set MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=strict, to offload them")
ACIS_REASON(SINGLE_RANK,     "communicator has a single process")
ACIS_REASON(INTERCOMM,       "intercommunicator")
ACIS_REASON(TABLE_FULL,      "switch communicator table or aggregation slots exhausted")
ACIS_REASON(COMM_SETUP,      "communicator table entry could not be created on every rank")
ACIS_REASON(DATATYPE,        "datatype is not a run of one predefined type the switch supports")
ACIS_REASON(OP_USER,         "user-defined reduction operation")
ACIS_REASON(OP_DATATYPE,     "reduction operation not defined for this datatype")
ACIS_REASON(MSG_SIZE,        "message larger than MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE")
ACIS_REASON(VECTOR_COUNTS,   "per-rank counts not supported by the switch for this collective")
ACIS_REASON(DEVICE_FAILED,   "the switch stopped answering; this communicator went back to software")
ACIS_REASON(BROKEN,          "after its switch failed the ranks could not finish a collective: calls acis would offload on this communicator return MPI_ERR_INTERN")
ACIS_REASON(NOT_SET_UP,      "nonblocking collective before the communicator's first blocking one, which sets it up (MPIR_CVAR_OFFLOAD_COMM_SETUP=eager sets it up at creation)")
