// launched_by_mpi() (doppler/engine/mpi_world.hpp): reads the environment only, so it is part of
// libdoppler and the same with or without MPI built (src/engine/mpi or its stand-in).
#include <cstdlib>

#include "doppler/engine/mpi_world.hpp"

namespace doppler {

bool launched_by_mpi() {
  // The variables the launchers set in every rank's environment: Open MPI's mpirun
  // (OMPI_COMM_WORLD_SIZE), MPICH's Hydra and other PMI-1/PMI-2 launchers such as srun
  // (PMI_SIZE), PMIx launchers such as Open MPI 5's prterun and srun --mpi=pmix (PMIX_RANK), and
  // MPICH's mpiexec (MPI_LOCALNRANKS).
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace doppler
