#include "train/checkpoint.hpp"

#include <unistd.h>

#include <cstdio>

#include "doppler/util/error.hpp"

namespace doppler::detail {

namespace {
const char* kFormat = "doppler-checkpoint";
}

void write_checkpoint(const std::filesystem::path& path, nn::DualAgent& agent, FusedAdam* opt_sel,
                      FusedAdam* opt_plc, const nlohmann::json& meta) {
  torch::serialize::OutputArchive root;
  torch::serialize::OutputArchive sel, plc;
  agent.sel->save(sel);
  agent.plc->save(plc);
  root.write("sel", sel);
  root.write("plc", plc);
  if (opt_sel && opt_plc) {
    torch::serialize::OutputArchive os, op;
    opt_sel->save(os);
    opt_plc->save(op);
    root.write("opt_sel", os);
    root.write("opt_plc", op);
  }
  nlohmann::json m = meta;
  m["format"] = kFormat;
  m["version"] = 1;
  root.write("meta", c10::IValue(m.dump()));
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  try {
    root.save_to(tmp.string());
  } catch (const c10::Error& e) {
    std::remove(tmp.c_str());
    throw InputError(path.string(), 0, "cannot write checkpoint");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(path.string(), 0, "cannot write checkpoint: " + ec.message());
  }
}

Checkpoint open_checkpoint(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path.string(), 0, "no such checkpoint file");
  Checkpoint c;
  c.archive = std::make_shared<torch::serialize::InputArchive>();
  try {
    c.archive->load_from(path.string());
    c10::IValue meta;
    if (!c.archive->try_read("meta", meta) || !meta.isString())
      throw InputError(path.string(), 0, "not a Doppler checkpoint (no meta record)");
    c.meta = nlohmann::json::parse(meta.toStringRef());
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path.string(), 0,
                     "unreadable checkpoint (truncated or not a Doppler checkpoint)");
  }
  if (!c.meta.is_object() || c.meta.value("format", "") != kFormat)
    throw InputError(path.string(), 0,
                     "not a Doppler checkpoint (format is not doppler-checkpoint)");
  if (c.meta.value("version", 0) != 1)
    throw InputError(path.string(), 0, "unsupported checkpoint version");
  return c;
}

void load_networks(const Checkpoint& c, nn::DualAgent& agent, const std::filesystem::path& path) {
  try {
    torch::serialize::InputArchive sel, plc;
    c.archive->read("sel", sel);
    c.archive->read("plc", plc);
    agent.sel->load(sel);
    agent.plc->load(plc);
  } catch (const std::exception& e) {
    throw InputError(path.string(), 0, "checkpoint networks do not match its configuration");
  }
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
