#pragma once
// The MPI job this process belongs to, for data-parallel work outside the engine (library
// doppler_mpi): rank, size and the two collectives `doppler pretrain` needs.
#include <vector>

namespace doppler {

/// True when this process was started by an MPI launcher, i.e. when MpiWorld should be used:
/// when any of the variables Open MPI (OMPI_COMM_WORLD_SIZE), PMI-1/PMI-2 launchers such as
/// MPICH's Hydra and srun (PMI_SIZE), PMIx launchers (PMIX_RANK) or MPICH's mpiexec
/// (MPI_LOCALNRANKS) set in every rank's environment is set. Reads the environment only (no MPI
/// call); the same in builds without MPI.
bool launched_by_mpi();

/// Initialises MPI unless it already is (MPI_THREAD_SERIALIZED: the engine's compute workers
/// call it, one at a time); returns true when this call initialised it. std::runtime_error
/// when initialisation fails or the library does not support that thread level.
bool init_mpi_serialized();

/// MPI_COMM_WORLD. Initialises MPI when needed (MPI_THREAD_SERIALIZED: the engine's workers call
/// it) and finalises it in the destructor when it initialised it. Every member function is
/// collective.
class MpiWorld {
public:
  MpiWorld();
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  /// This process's rank.
  int rank() const { return rank_; }
  /// Number of ranks.
  int size() const { return size_; }
  /// Replaces `v` by its element-wise mean over the ranks (MPI_Allreduce, float sums).
  void average(std::vector<float>& v) const;
  /// True when `x` is bit-identical on every rank.
  bool agree(double x) const;

private:
  int rank_ = 0, size_ = 1;
  bool owns_ = false;
};

}  // namespace doppler
