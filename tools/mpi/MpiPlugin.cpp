//===- tools/mpi/MpiPlugin.cpp - What hbgc sweep needs of MPI -------------===//

#include "MpiPlugin.h"

#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int gather(const char *data, unsigned long n, char **out, unsigned long *outN) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
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

void finalize() { MPI_Finalize(); }

HbgMpi gMpi{0, 1, gather, finalize};

} // namespace

extern "C" __attribute__((visibility("default"))) const HbgMpi *hbg_mpi_init(int *argc,
                                                                           char ***argv) {
  if (MPI_Init(argc, argv) != MPI_SUCCESS)
    return nullptr;
  MPI_Comm_rank(MPI_COMM_WORLD, &gMpi.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &gMpi.size);
  return &gMpi;
}
