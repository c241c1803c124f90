// MpiEngine::share: rank 0 broadcasts the next assignment (or a stop marker) to every rank.
#include <cstdint>

#include <mpi.h>

#include "doppler/engine/mpi_backend.hpp"

namespace doppler {

std::optional<Assignment> MpiEngine::share(const std::optional<Assignment>& work) {
  // Header: devices (0 = stop), number of devices entries, number of order entries.
  std::int64_t head[3] = {0, 0, 0};
  if (rank() == 0 && work) {
    head[0] = work->devices;
    head[1] = static_cast<std::int64_t>(work->device_of.size());
    head[2] = static_cast<std::int64_t>(work->order.size());
  }
  MPI_Bcast(head, 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (head[0] == 0) return std::nullopt;
  Assignment a;
  if (rank() == 0) a = *work;
  a.devices = static_cast<int>(head[0]);
  a.device_of.resize(static_cast<std::size_t>(head[1]));
  a.order.resize(static_cast<std::size_t>(head[2]));
  MPI_Bcast(a.device_of.data(), static_cast<int>(head[1]), MPI_INT32_T, 0, MPI_COMM_WORLD);
  if (head[2] > 0)
    MPI_Bcast(a.order.data(), static_cast<int>(head[2]), MPI_INT32_T, 0, MPI_COMM_WORLD);
  return a;
}

}  // namespace doppler
