//===- tools/mpi/MpiPlugin.cpp - What hbgc sweep needs of MPI -------------===//

#include "MpiPlugin.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int gather(const char *data, unsigned long n, char **out, unsigned long *outN) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // MPI's counts are ints: every rank learns the total first, so that all
  // refuse together rather than some waiting for the others.
  long long n64 = static_cast<long long>(n), total64 = 0;
  if (MPI_Allreduce(&n64, &total64, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
    return 1;
  if (total64 > INT_MAX)
    return 2;
  int mine = static_cast<int>(n);
  std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  if (MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    return 1;
  long total = 0;
  if (rank == 0)
    for (int r = 0; r < size; ++r) {
      offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += counts[static_cast<std::size_t>(r)];
    }
  char *buffer = rank == 0 ? static_cast<char *>(std::malloc(static_cast<std::size_t>(total) + 1))
                           : nullptr;
  int rc = MPI_Gatherv(data, mine, MPI_CHAR, buffer, counts.data(), offsets.data(), MPI_CHAR, 0,
                       MPI_COMM_WORLD);
  if (rank == 0) {
    *out = buffer;
    *outN = static_cast<unsigned long>(total);
  }
  return rc == MPI_SUCCESS ? 0 : 1;
}

int allOk(int ok) {
  int all = ok ? 1 : 0, mine = all;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

void finalize() { MPI_Finalize(); }

HbgMpi gMpi{0, 1, gather, allOk, finalize};

} // namespace

extern "C" __attribute__((visibility("default"))) const HbgMpi *hbg_mpi_init(int *argc,
                                                                           char ***argv) {
  if (MPI_Init(argc, argv) != MPI_SUCCESS)
    return nullptr;
  MPI_Comm_rank(MPI_COMM_WORLD, &gMpi.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &gMpi.size);
  return &gMpi;
}
