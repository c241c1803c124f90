#pragma once
// The full result of one simulation (or one engine run): when and where every op and transfer
// ran, and per-device totals.
#include <string>
#include <vector>

#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/types.hpp"

namespace doppler {

/// One cross-device transfer: the output of `src` sent from device `from` to device `to`.
struct TransferRecord {
  NodeId src = 0;          ///< producer op
  DeviceId from = 0;       ///< source device
  DeviceId to = 0;         ///< destination device
  double bytes = 0;        ///< bytes moved (hardware model; reference model: 0)
  double start = 0;        ///< when it started occupying its links
  double finish = 0;       ///< when the data arrived on `to`
  std::vector<int> links;  ///< link ids crossed (hardware model; empty for the reference model)
};

/// Start/finish times of every op and transfer. Times are in `unit`.
struct Schedule {
  CostUnit unit = CostUnit::reference;    ///< unit of every time below
  int devices = 0;                        ///< device count P
  double makespan = 0;                    ///< finish time of the last op (0 for an empty graph)
  std::vector<DeviceId> device;           ///< device of each op (-1: not simulated)
  std::vector<double> ready;              ///< when each op's last input arrived
  std::vector<double> start;              ///< when each op started computing
  std::vector<double> finish;             ///< when each op finished
  std::vector<TransferRecord> transfers;  ///< every cross-device transfer, in start order
  std::vector<double> busy;               ///< per device: total compute time of its ops
  std::vector<int> slots;                 ///< per device: ops it runs at once
  std::vector<std::string> link_names;    ///< names of the links (hardware model)
  double cross_bytes = 0;                 ///< bytes moved between devices
  int cross_transfers = 0;                ///< number of cross-device transfers

  /// Fraction of device d's capacity used: busy / (makespan x slots); 0 when makespan is 0.
  double utilization(DeviceId d) const;
};

}  // namespace doppler
