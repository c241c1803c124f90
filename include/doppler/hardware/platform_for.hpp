#pragma once
// Choosing the platform of a graph from a hardware profile name (or none): what `--hardware`
// means for the CLI and `hardware=` for the Python binding.
#include <string>

#include "doppler/graph/graph.hpp"
#include "doppler/hardware/platform.hpp"

namespace doppler {

/// The platform for `g` on `devices` devices: the hardware profile `hardware` (a shipped name or
/// a doppler-hardware JSON file) when non-empty, else the reference model. InputError when `g`
/// has no reference costs and no profile is given (the message names the shipped profiles).
Platform platform_for(const Graph& g, const std::string& hardware, int devices);

/// A warning when profile `hardware` (non-empty) would price `g` from FLOPs and bytes that it does
/// not have: a graph with reference costs only (every op 0 FLOPs and 0 bytes) would cost each
/// op its fixed overhead alone. Empty when there is nothing to say.
std::string pricing_warning(const Graph& g, const std::string& hardware);

/// A warning when the profile of `platform` was calibrated without kernels that `g`'s ops run
/// (HardwareProfile::left_out: `calibrate --kernels`), which it prices by FLOPs: names them with
/// their op counts. Empty when there is nothing to say (the reference model included).
std::string kernel_coverage_warning(const Graph& g, const Platform& platform);

}  // namespace doppler
