#include "doppler/engine/mpi_world.hpp"

#include <stdexcept>

#include <mpi.h>

namespace doppler {

bool init_mpi_serialized() {
  int init = 0;
  MPI_Initialized(&init);
  if (!init) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      throw std::runtime_error("MPI_Init_thread failed");
  }
  // The engine's compute workers call MPI (one at a time): the library must allow it.
  int level = 0;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_SERIALIZED)
    throw std::runtime_error(
        "the MPI library does not support MPI_THREAD_SERIALIZED (the engine's workers call it)");
  return !init;
}

MpiWorld::MpiWorld() {
  owns_ = init_mpi_serialized();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiWorld::~MpiWorld() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

void MpiWorld::average(std::vector<float>& v) const {
  if (size_ <= 1 || v.empty()) return;
  MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_FLOAT, MPI_SUM,
                MPI_COMM_WORLD);
  const float inv = 1.0f / static_cast<float>(size_);
  for (float& x : v) x *= inv;
}

bool MpiWorld::agree(double x) const {
  if (size_ <= 1) return true;
  double lo = x, hi = x;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

}  // namespace doppler
