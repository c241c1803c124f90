#include "doppler/engine/gpus.hpp"

namespace doppler {

SmGranularity sm_granularity(int major) {
  if (major >= 9) return {8, 8};
  if (major == 8) return {4, 2};
  return {2, 2};
}

int partition_sms(int sms, int partitions, SmGranularity g) {
  if (partitions < 1 || g.step < 1) return 0;
  const int share = sms / partitions;
  const int aligned = share - share % g.step;
  return aligned >= g.min_sms ? aligned : 0;
}

}  // namespace doppler
