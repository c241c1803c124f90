#include "train/optimizer_checkpoint.hpp"

#include "doppler/util/error.hpp"

namespace doppler::detail {

void write_checkpoint(const std::filesystem::path& path, nn::DualAgent& agent, FusedAdam* opt_sel,
                      FusedAdam* opt_plc, const nlohmann::json& meta) {
  ExtraRecords extra;
  if (opt_sel && opt_plc)
    extra = [&](torch::serialize::OutputArchive& root) {
      torch::serialize::OutputArchive os, op;
      opt_sel->save(os);
      opt_plc->save(op);
      root.write("opt_sel", os);
      root.write("opt_plc", op);
    };
  write_checkpoint(path, agent, meta, extra);
}

void load_optimizers(const Checkpoint& c, FusedAdam& opt_sel, FusedAdam& opt_plc,
                     const std::filesystem::path& path) {
  try {
    torch::serialize::InputArchive os, op;
    c.archive->read("opt_sel", os);
    c.archive->read("opt_plc", op);
    opt_sel.load(os);
    opt_plc.load(op);
  } catch (const std::exception& e) {
    throw InputError(path.string(), 0, "checkpoint has no optimiser state (it cannot be resumed)");
  }
}

}  // namespace doppler::detail
