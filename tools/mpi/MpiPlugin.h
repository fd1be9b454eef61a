//===- tools/mpi/MpiPlugin.h - What hbgc sweep needs of MPI ---------------===//
//
// `mpirun -n K hbgc sweep ...` spreads a sweep over MPI ranks. hbgc does not
// link MPI: it loads libhbg_mpi.so (this interface, over Open MPI) with
// dlopen only when it runs under mpirun, so that every other command starts
// without MPI and hbgc runs where MPI is not installed.
//
//===----------------------------------------------------------------------===//
#pragma once

extern "C" {

struct HbgMpi {
  int rank;
  int size;
  /// Gathers each rank's `n` bytes at rank 0, concatenated in rank order,
  /// into `*out` (malloc'ed; rank 0 frees it) of `*outN` bytes. 0 on
  /// success; 2 on every rank when the total exceeds 2^31 - 1 bytes.
  int (*gather)(const char *data, unsigned long n, char **out, unsigned long *outN);
  /// Whether every rank's `ok` is nonzero (all ranks get the answer): a
  /// failure on one rank stops all, where waiting for it would hang.
  int (*allOk)(int ok);
  void (*finalize)();
};

/// Initialises MPI; null when it cannot.
typedef const HbgMpi *(*HbgMpiInit)(int *argc, char ***argv);
const HbgMpi *hbg_mpi_init(int *argc, char ***argv);

} // extern "C"
