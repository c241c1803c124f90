// mpi_backend.hpp and mpi_world.hpp in a build without MPI (DOPPLER_WITH_MPI=off or no MPI
// found): the CLI links the same names, and asking for MPI ranks (`--backend mpi`, a
// data-parallel pretraining run) fails with one line naming the missing component.

#include "doppler/engine/mpi_backend.hpp"
#include "doppler/engine/mpi_world.hpp"
#include "doppler/util/components.hpp"

namespace doppler {

namespace {

[[noreturn]] void refuse() {
  throw component_absent("--backend mpi", Component::mpi);
}

}  // namespace

bool init_mpi_serialized() {
  throw component_absent("MPI ranks", Component::mpi);
}

MpiWorld::MpiWorld() {
  throw component_absent("MPI ranks", Component::mpi);
}

MpiWorld::~MpiWorld() = default;

void MpiWorld::average(std::vector<float>&) const {}

bool MpiWorld::agree(double) const {
  return true;
}

struct MpiEngine::Impl {};

MpiEngine::MpiEngine(const Graph&, EngineOptions) {
  refuse();
}

MpiEngine::~MpiEngine() = default;

EngineFactory MpiEngine::factory() {
  return [](const Graph&, const EngineOptions&) -> std::unique_ptr<EngineRunner> { refuse(); };
}

int MpiEngine::rank() const {
  refuse();
}

int MpiEngine::ranks() const {
  refuse();
}

int MpiEngine::owner(DeviceId) const {
  refuse();
}

EngineResult MpiEngine::run(const Assignment&, DispatchRule) {
  refuse();
}

Measurement MpiEngine::measure(const Assignment&, DispatchRule, int, int) {
  refuse();
}

std::vector<float> MpiEngine::gather_output(NodeId) {
  refuse();
}

std::optional<Assignment> MpiEngine::share(const std::optional<Assignment>&) {
  refuse();
}

KernelMode MpiEngine::kernel_mode() const {
  refuse();
}

double MpiEngine::total_flops() const {
  refuse();
}

std::string MpiEngine::describe() const {
  refuse();
}

const std::vector<std::string>& MpiEngine::warnings() const {
  refuse();
}

}  // namespace doppler
