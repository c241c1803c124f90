// doppler: device assignment for asynchronous dataflow graphs (command-line interface).
// Exit codes: 0 success, 2 bad input or usage, 1 internal failure.
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "help_format.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/util/components.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/retain_memory.hpp"

namespace {

// The CLI's wording of what would fix an input error (the library names it as a concept).
std::string cli_remedy(const doppler::InputError& e) {
  const std::string& s = e.remedy_subject();
  switch (e.remedy()) {
    case doppler::Remedy::input_shape:
      return "; give its shape with --input " + s + ":DIMS (e.g. 1x128)";
    case doppler::Remedy::hardware:
      return ": pass --hardware PROFILE (shipped: " + s + ")";
    case doppler::Remedy::output_format:
      return "; or pass --to FORMAT";
    case doppler::Remedy::none:
      break;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  // Graph files with weights (hundreds of MB of text) and engines' buffers reuse freed pages
  // (an imported ViT-B/16's 460 MB graph loads in 9.0 s instead of 10.8 here).
  doppler::retain_freed_memory();
  auto logger = spdlog::stderr_color_st("doppler");
  logger->set_pattern("doppler: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);

  CLI::App app{
      "Doppler places the operations of an ML dataflow graph on devices so that it finishes as "
      "fast as possible on an asynchronous, work-conserving runtime.\n"};
  app.name("doppler");
  // Before the commands are added: they share it. The listing gives each a one-line summary.
  app.formatter(std::make_shared<doppler::cli::HelpFormatter>());
  app.require_subcommand(1);
  app.fallthrough();
  // The version and the optional components built (cmake/Components.cmake), one line each.
  app.set_version_flag("--version", std::string("doppler ") + DOPPLER_VERSION + "\n" +
                                        doppler::describe_components());
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "log progress details on stderr");
  app.add_flag("-q,--quiet", quiet, "log only errors on stderr");
  app.parse_complete_callback([&] {
    if (verbose) spdlog::set_level(spdlog::level::info);
    if (quiet) spdlog::set_level(spdlog::level::err);
  });
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "doppler: usage error: " + std::string(e.what()) + " (see --help)\n";
  });
  app.footer(
      "Exit codes: 0 success, 2 bad input or usage, 1 internal failure.\n"
      "Run 'doppler <command> --help' for a command's whole description and options.");

  try {
    doppler::cli::prepare_learned(argc, argv);  // before add_demo, add_train and add_pretrain
    doppler::cli::add_info(app);
    doppler::cli::add_convert(app);
    doppler::cli::add_import(app);
    doppler::cli::add_demo(app);
    doppler::cli::add_generate(app);
    doppler::cli::add_simulate(app);
    doppler::cli::add_place(app);
    doppler::cli::add_methods(app);
    doppler::cli::add_compare(app);
    doppler::cli::add_bench_suite(app);
    doppler::cli::add_execute(app);
    doppler::cli::add_calibrate(app);
    doppler::cli::add_validate_sim(app);
    doppler::cli::add_gpus(app);
    doppler::cli::register_backends();
    doppler::cli::add_train(app);
    doppler::cli::add_pretrain(app);
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e, std::cout, std::cerr);
    return 2;
  } catch (const doppler::InputError& e) {
    std::cout.flush();
    std::fprintf(stderr, "doppler: error: %s%s\n", e.what(), cli_remedy(e).c_str());
    return 2;
  } catch (const doppler::EngineError& e) {
    // An engine that could not run (no GPU, a failed kernel, a timeout): its cause, one line.
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    std::cout.flush();
    std::fprintf(stderr, "doppler: error: %s\n", what.c_str());
    return 1;
  } catch (const std::exception& e) {
    // One line: libraries such as libtorch append multi-line backtraces to what().
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    std::cout.flush();
    std::fprintf(stderr, "doppler: internal error: %s\n", what.c_str());
    return 1;
  }
  return 0;
}
