#include "doppler/engine/runner.hpp"

#include "doppler/engine/engine.hpp"

namespace doppler {

EngineFactory local_engine_factory() {
  return [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<EngineRunner> {
    return std::make_unique<Engine>(g, o);
  };
}

}  // namespace doppler
