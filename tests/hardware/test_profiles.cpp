// Shipped hardware profiles and the profile reader.
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/hardware/platform_for.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// Adds a node running kernel `op` on `inputs` (whole operands unless a region is given) with
// output `shape`, and its edges.
NodeId exec_node(GraphBuilder& b, const char* op, double flops, double out_bytes,
                 std::vector<ExecInput> inputs = {}, std::vector<std::int64_t> shape = {}) {
  Node n;
  n.flops = flops;
  n.out_bytes = out_bytes;
  ExecDesc x;
  x.op = op;
  x.shape = std::move(shape);
  x.inputs = std::move(inputs);
  n.exec = x;
  const NodeId v = b.add_node(n);
  for (const ExecInput& in : n.exec->inputs) b.add_edge(in.src, v);
  return v;
}

TEST(Profiles, EveryShippedProfileParsesWithFullRoutes) {
  const auto& shipped = shipped_profiles();
  std::set<std::string> names;
  for (const auto& s : shipped) names.insert(s.name);
  for (const char* want : {"4xP100-PCIe", "8xV100-NVLink", "8xA100-NVSwitch", "8xH100-NVSwitch",
                           "16xH100-2node", "4xH100-SM32-PCIe", "cpu-threads"})
    EXPECT_TRUE(names.count(want)) << want;
  for (const auto& s : shipped) {
    SCOPED_TRACE(s.name);
    EXPECT_NE(s.json.find("\"source\""), std::string::npos) << "every profile cites its sources";
    const HardwareProfile hw = load_hardware_profile(s.name);
    const int p = hw.num_devices();
    for (int a = 0; a < p; ++a)
      for (int b = 0; b < p; ++b) {
        EXPECT_EQ(hw.route(a, b).empty(), a == b);
        for (int l : hw.route(a, b)) {
          ASSERT_GE(l, 0);
          ASSERT_LT(l, static_cast<int>(hw.links.size()));
        }
        if (a != b) {
          EXPECT_GT(hw.transfer_time(a, b, 1e9), 0);
        }
      }
  }
}

TEST(Profiles, AliasesAreCaseInsensitive) {
  EXPECT_EQ(load_hardware_profile("P100").name, "4xP100-PCIe");
  EXPECT_EQ(load_hardware_profile("v100").num_devices(), 8);
  try {
    load_hardware_profile("tpu");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("shipped: "), std::string::npos);
  }
}

// The DGX-1V hybrid cube-mesh: six NVLink lanes per GPU, symmetric; GPU 0 reaches 1, 2, 3, 4
// directly (one link each: 25 GB/s or 50 GB/s) and 5, 6, 7 through PCIe (five links).
TEST(Profiles, V100CubeMesh) {
  const HardwareProfile hw = load_hardware_profile("8xV100-NVLink");
  for (int a = 0; a < 8; ++a) {
    double lanes = 0;
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      EXPECT_EQ(hw.route(a, b).size(), hw.route(b, a).size());
      if (hw.route(a, b).size() == 1)
        lanes += hw.links[static_cast<std::size_t>(hw.route(a, b)[0])].bandwidth / 25e9;
    }
    EXPECT_DOUBLE_EQ(lanes, 6) << "GPU " << a;
  }
  for (int b : {1, 2, 3, 4}) EXPECT_EQ(hw.route(0, b).size(), 1u);
  for (int b : {5, 6, 7}) EXPECT_EQ(hw.route(0, b).size(), 5u);
  // 0-3 has two lanes: twice the bandwidth of 0-1.
  EXPECT_LT(hw.transfer_time(0, 3, 1e9), hw.transfer_time(0, 1, 1e9));
}

TEST(Profiles, CostModelUsesDtypeAndRoutes) {
  const HardwareProfile hw = load_hardware_profile("p100");
  GraphBuilder b;
  Node n;
  n.flops = 9.3e12;
  n.out_bytes = 12e9;
  b.add_node(n);
  b.add_node(n);
  b.add_edge(0, 1);
  b.set_meta({"g", "test", {{"dtype", "f16"}}});
  const Graph g = b.build();
  const CostModel cm = Platform::hardware(hw, 4).cost_model(g);
  EXPECT_EQ(cm.unit(), CostUnit::seconds);
  EXPECT_DOUBLE_EQ(cm.compute(0, 0), 5e-6 + 9.3e12 / (18.7e12 * 0.7));
  // 0 -> 1 inside a switch: device links only (12 GB/s), latency 5 us + 5 us.
  EXPECT_DOUBLE_EQ(cm.transfer(0, 0, 1), 10e-6 + 1.0);
  // 0 -> 2 crosses the 9 GB/s host bridge.
  EXPECT_DOUBLE_EQ(cm.transfer(0, 0, 2), 5e-6 + 1e-6 + 2e-6 + 1e-6 + 5e-6 + 12e9 / 9e9);
  EXPECT_THROW(Platform::hardware(hw, 5), InputError);
}

// bf16 graphs take a profile's bf16 peak where it lists one (H100: the f16 Tensor Core rate), and
// f32's where the hardware has none (P100: no bf16 units, not its f16 rate).
TEST(Profiles, Bf16GraphsTakeTheBf16PeakOrF32s) {
  const auto seconds = [](const char* profile) {
    GraphBuilder b;
    Node n;
    n.flops = 1e12;
    b.add_node(n);
    b.set_meta({"g", "test", {{"dtype", "bf16"}}});
    const Graph g = b.build();
    const HardwareProfile hw = load_hardware_profile(profile);
    return Platform::hardware(hw, 2).cost_model(g).compute(0, 0) - hw.devices[0].launch_overhead;
  };
  EXPECT_DOUBLE_EQ(seconds("h100"), 1e12 / (989e12 * 0.6));
  EXPECT_DOUBLE_EQ(seconds("p100"), 1e12 / (9.3e12 * 0.7));
}

// The H100 partition profile from the datasheet by hand: a quarter of the GPU (32 of 132 SMs,
// a quarter of 3.35 TB/s HBM3), copies as `--gpu-link pcie` paces them (50 GB/s + 5 us).
TEST(Profiles, H100PartitionsAreAQuarterOfTheDatasheet) {
  const HardwareProfile hw = load_hardware_profile("h100-sm4");
  ASSERT_EQ(hw.num_devices(), 4);
  const double hbm = 3.35e12 / 4, overhead = 10e-6;
  const double act = 2048.0 * 4096 * 2;  // one bf16 2048 x 4096 activation, bytes
  GraphBuilder b;
  const NodeId x = exec_node(b, "input", 0, act), y = exec_node(b, "input", 0, act);
  const NodeId add = exec_node(b, "add", 2048.0 * 4096, act, {{x, {}, {}}, {y, {}, {}}});
  const NodeId exp = exec_node(b, "exp", 2048.0 * 4096, act, {{x, {}, {}}});
  const NodeId sum = exec_node(b, "reduce_sum", 2048.0 * 4096, 2048.0 * 2, {{x, {}, {}}});
  const NodeId gemm = exec_node(b, "einsum", 2.0 * 2048 * 4096 * 4096, act, {{x, {}, {}}});
  b.set_meta({"g", "test", {{"dtype", "bf16"}}});
  const Graph g = b.build();
  const CostModel cm = Platform::hardware(hw, 4).cost_model(g);
  const auto near = [](double got, double want) { EXPECT_NEAR(got, want, 1e-3 * want); };
  near(cm.compute(add, 3), overhead + 3 * act / hbm);  // two reads, one write
  near(cm.compute(exp, 0), overhead + 2 * act / hbm);  // one read, one write
  near(cm.compute(sum, 1), overhead + act / hbm);      // reads its input once
  near(cm.compute(gemm, 2), overhead + 2.0 * 2048 * 4096 * 4096 / (989e12 * 32 / 132 * 0.6));
  near(hw.transfer_time(0, 3, act), 5e-6 + act / 50e9);
}

// A profile's kernel table prices each listed kernel by its FLOPs or output bytes (on device 0,
// scaled by the other devices' relative speed); other ops keep FLOPs / peak.
TEST(Profiles, KernelCostsPriceListedKernels) {
  const HardwareProfile hw = parse_hardware_profile(R"({"format": "doppler-hardware",
    "version": 1, "name": "k", "devices": [
      {"peak_flops": {"f32": 1e9}, "launch_overhead": 1e-6},
      {"peak_flops": {"f32": 2e9}, "launch_overhead": 1e-6}],
    "topology": {"kind": "all-to-all", "link": {"bandwidth": 1e9}},
    "kernels": {"exp": {"seconds_per_op": 2e-6, "seconds_per_flop": 4e-9, "samples": 3,
                        "source": "test"},
                "input": {"seconds_per_byte": 1e-10}}})",
                                                    "k.json");
  ASSERT_EQ(hw.kernels.size(), 2u);
  GraphBuilder b;
  const auto add = [&](const char* kernel, double flops, double bytes) {
    Node n;
    n.flops = flops;
    n.out_bytes = bytes;
    if (kernel) {
      ExecDesc e;
      e.op = kernel;
      n.exec = e;
    }
    return b.add_node(n);
  };
  add("input", 0, 4000);
  add("exp", 1000, 4000);
  add("relu", 1000, 4000);
  add(nullptr, 500, 4000);
  const Graph g = b.build();
  const CostModel cm = Platform::hardware(hw, 2).cost_model(g);
  EXPECT_DOUBLE_EQ(cm.compute(0, 0), 1e-6 + 4000 * 1e-10);
  EXPECT_DOUBLE_EQ(cm.compute(1, 0), 1e-6 + 2e-6 + 1000 * 4e-9);
  EXPECT_DOUBLE_EQ(cm.compute(1, 1), 1e-6 + (2e-6 + 1000 * 4e-9) / 2);  // twice as fast
  EXPECT_DOUBLE_EQ(cm.compute(2, 0), 1e-6 + 1000 / 1e9);                // relu: not listed
  EXPECT_DOUBLE_EQ(cm.compute(3, 1), 1e-6 + 500 / 2e9);                 // no exec description
}

TEST(Profiles, BadProfilesAreRejectedWithLines) {
  const auto err = [](const std::string& body) {
    try {
      parse_hardware_profile(
          "{\"format\": \"doppler-hardware\", \"version\": 1, \"name\": \"x\",\n" + body + "}",
          "h.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string dev = R"("device": {"peak_flops": {"f32": 1e12}}, "count": 2,)"
                          "\n";
  EXPECT_EQ(err(dev + R"("topology": {"kind": "mesh"})"),
            "h.json:3: unknown topology \"mesh\" (expected all-to-all, ring, switch, pcie-tree, "
            "nvlink-table or matrix)");
  EXPECT_EQ(err(dev + R"("topology": {"kind": "all-to-all", "link": {"bandwidth": 0}})"),
            "h.json:3: bandwidth must be > 0 bytes/s");
  EXPECT_EQ(
      err(R"("device": {"peak_flops": {"f16": 1e12}}, "count": 2, "topology": {"kind": "ring", "link": {"bandwidth": 1}})"),
      "h.json:2: peak_flops needs an \"f32\" entry");
  EXPECT_EQ(
      err(R"("device": {"peak_flops": {"f32": 1}, "efficiency": 1.5}, "count": 1, "topology": {"kind": "ring", "link": {"bandwidth": 1}})"),
      "h.json:2: efficiency must be in (0, 1]");
  EXPECT_EQ(
      err(R"("device": {"peak_flops": {"f32": 1}, "copy_share": 4.5}, "count": 1, "topology": {"kind": "ring", "link": {"bandwidth": 1}})"),
      "h.json:2: copy_share must be in [0, 4]");
  EXPECT_EQ(
      err(R"("device": {"peak_flops": {"f32": 1}, "contention": 1}, "count": 1, "topology": {"kind": "ring", "link": {"bandwidth": 1}})"),
      "h.json:2: contention must be in [0, 0.9]");
  EXPECT_EQ(
      err(dev +
          R"("topology": {"kind": "pcie-tree", "switches": [[0]], "device_link": {"bandwidth": 1}, "switch_link": {"bandwidth": 1}, "host_bridge": {"bandwidth": 1}})"),
      "h.json:3: device 1 is under no switch");
  EXPECT_EQ(
      err(R"("device": {"peak_flops": {"f32": 1}}, "count": 2000, "topology": {"kind": "ring", "link": {"bandwidth": 1}})"),
      "h.json:2: integer 2000 is out of range (expected 1..1024)");
  const std::string ring = R"("topology": {"kind": "ring", "link": {"bandwidth": 1}},)"
                           "\n";
  EXPECT_EQ(err(dev + ring + R"("kernels": {"exp": {"seconds_per_flop": -1}})"),
            "h.json:4: expected a number >= 0, found -1");
  EXPECT_EQ(err(dev + ring + R"("kernels": {"exp": {"per_flop": 1}})"),
            "h.json:4: unknown kernel field 'per_flop'");
  EXPECT_EQ(err(dev + ring + R"("kernels": [1])"), "h.json:4: expected an object, found array");
  EXPECT_EQ(err(dev + R"("topology": {"kind": "ring", "link": {"bandwidth": 1, "delay": -0.5}})"),
            "h.json:3: expected a number >= 0, found -0.5");
  EXPECT_EQ(err(dev + ring + R"("kernels": {"exp": {"points": [[2, 1e-6], [1, 2e-6]]}})"),
            "h.json:4: points must have increasing units and non-decreasing seconds");
  EXPECT_EQ(err(dev + ring + R"("kernels": {"exp": {"points": [[1, 2e-6], [2, 1e-6]]}})"),
            "h.json:4: points must have increasing units and non-decreasing seconds");
  EXPECT_EQ(err(dev + ring + R"("kernels": {"exp": {"points": [[0, 1e-6]]}})"),
            "h.json:4: units must be > 0 and seconds >= 0");
  EXPECT_EQ(err(dev + ring + R"("kernels": {"exp": {"points": [1e-6]}})"),
            "h.json:4: expected [units, seconds]");
  EXPECT_EQ(err(dev + ring + R"("kernels": {"exp": {"points_unit": "bytes"}})"),
            "h.json:4: points_unit must be flops or out_bytes");
  EXPECT_EQ(err(dev + ring + R"("calibration_source": {"kernels_left_out": ["exp", 3]})"),
            "h.json:4: expected an array of kernel names");
}

// A profile calibrated for chosen kernels (calibration_source.kernels_left_out) warns for the
// graphs with ops of the kernels it left out, naming them with their op counts; nothing for a
// graph without such ops, a profile without the list, or no profile.
TEST(Profiles, KernelsLeftOutByTheCalibrationAreNamed) {
  test::TempDir dir;
  const auto profile = [&](const std::string& name, const std::string& source) {
    const std::string path = (dir / (name + ".json")).string();
    std::ofstream(path) << R"({"format": "doppler-hardware", "version": 1, "name": ")" << name
                        << R"(", "device": {"peak_flops": {"f32": 1e9}}, "count": 2,
      "topology": {"kind": "all-to-all", "link": {"bandwidth": 1e9}},
      "kernels": {"exp": {"seconds_per_flop": 4e-9}}, "calibration_source": )"
                        << source << "}";
    return path;
  };
  const std::string some = profile("some", R"({"kernels_left_out": ["add", "silu", "tanh"]})");
  const std::string all = profile("all", R"({"benchmarked_kernels": "all"})");
  EXPECT_EQ(load_hardware_profile(some).left_out, (std::set<std::string>{"add", "silu", "tanh"}));
  GraphBuilder b;
  const NodeId x = exec_node(b, "exp", 10, 40);
  exec_node(b, "silu", 10, 40, {{x, {}, {}}});
  exec_node(b, "silu", 10, 40, {{x, {}, {}}});
  exec_node(b, "add", 10, 40, {{x, {}, {}}});
  exec_node(b, "relu", 10, 40, {{x, {}, {}}});
  const Graph g = b.build();
  const auto on = [](const std::string& path) {
    return Platform::hardware(load_hardware_profile(path), 2);
  };
  const std::string w = kernel_coverage_warning(g, on(some));
  EXPECT_NE(w.find("profile 'some' was calibrated without kernels of graph"), std::string::npos)
      << w;
  EXPECT_NE(w.find(": add (1 op), silu (2 ops); it prices them by FLOPs"), std::string::npos) << w;
  EXPECT_EQ(kernel_coverage_warning(g, on(all)), "");
  EXPECT_EQ(kernel_coverage_warning(g, Platform::reference(2)), "");
  GraphBuilder c;
  exec_node(c, "exp", 10, 40);
  EXPECT_EQ(kernel_coverage_warning(c.build(), on(some)), "");
}

// Measured sizes replace the line: linear between points, from (0, seconds_per_op) up to the
// first, at the last point's rate beyond it; by output bytes where points_unit says so. Values by
// hand: points (1000 FLOPs, 2 us), (3000, 10 us); seconds_per_op 1 us.
TEST(Profiles, KernelPointsAreInterpolated) {
  const HardwareProfile hw = parse_hardware_profile(R"({"format": "doppler-hardware",
    "version": 1, "name": "k", "device": {"peak_flops": {"f32": 1e9}, "launch_overhead": 1e-6},
    "count": 1, "topology": {"kind": "all-to-all", "link": {"bandwidth": 1e9}},
    "kernels": {"einsum": {"seconds_per_op": 1e-6, "seconds_per_flop": 1,
                           "points": [[1000, 2e-6], [3000, 10e-6]]},
                "fill": {"points": [[100, 1e-6], [200, 3e-6]], "points_unit": "out_bytes"}}})",
                                                    "k.json");
  const KernelCost& e = hw.kernels.at("einsum");
  EXPECT_DOUBLE_EQ(e.seconds(1000, 0), 2e-6);
  EXPECT_DOUBLE_EQ(e.seconds(2000, 0), 6e-6);    // half-way: 2 + (10 - 2) / 2
  EXPECT_DOUBLE_EQ(e.seconds(500, 0), 1.5e-6);   // from (0, 1 us) to (1000, 2 us)
  EXPECT_DOUBLE_EQ(e.seconds(6000, 0), 20e-6);   // 10 us x 6000 / 3000
  EXPECT_DOUBLE_EQ(e.seconds(2000, 1e9), 6e-6);  // output bytes do not count
  const KernelCost& f = hw.kernels.at("fill");
  EXPECT_DOUBLE_EQ(f.seconds(1e9, 150), 2e-6);
  GraphBuilder b;
  Node n;
  n.flops = 2000;
  ExecDesc x;
  x.op = "einsum";
  n.exec = x;
  b.add_node(n);
  const Graph g = b.build();
  EXPECT_DOUBLE_EQ(Platform::hardware(hw, 1).cost_model(g).compute(0, 0), 1e-6 + 6e-6);
}

// A floor per byte read: a GEMV-shaped einsum (few FLOPs, a large weight block) is priced by its
// bytes, a GEMM-shaped one by its FLOPs. By hand: points (1e6 FLOPs, 10 us), 1e-11 s per input
// byte (100 GB/s). Op 2 reads a 1 MB weight block and a 1 KB row: 1,049,600 bytes, 10.496 us,
// above its 2e5 FLOPs' 2 us. Op 3 reads one 256-element row (1 KB) of the 1 MB block: 1e6 FLOPs
// price it, 10 us.
TEST(Profiles, InputBytesFloorPricesMemoryBoundOps) {
  const HardwareProfile hw = parse_hardware_profile(R"({"format": "doppler-hardware",
    "version": 1, "name": "k", "device": {"peak_flops": {"f32": 1e9}, "launch_overhead": 0},
    "count": 1, "topology": {"kind": "all-to-all", "link": {"bandwidth": 1e9}},
    "kernels": {"einsum": {"points": [[1e6, 10e-6]], "seconds_per_input_byte": 1e-11}}})",
                                                    "k.json");
  const KernelCost& e = hw.kernels.at("einsum");
  EXPECT_DOUBLE_EQ(e.seconds_per_input_byte, 1e-11);
  EXPECT_DOUBLE_EQ(e.seconds(1e6, 0, 0), 10e-6);
  EXPECT_DOUBLE_EQ(e.seconds(1e6, 0, 2e6), 20e-6);  // the floor: 2 MB read
  EXPECT_DOUBLE_EQ(e.seconds(1e6, 0, 5e5), 10e-6);  // below the floor's 5 us: the points
  GraphBuilder b;
  const NodeId w = exec_node(b, "input", 0, 1048576, {}, {512, 512});
  const NodeId row = exec_node(b, "input", 0, 1024, {}, {1, 256});
  exec_node(b, "einsum", 2e5, 2048, {{row, {}, {}}, {w, {}, {}}}, {1, 512});
  exec_node(b, "einsum", 1e6, 1024, {{w, {0, 0}, {1, 256}}}, {1, 256});
  const Graph g = b.build();
  const CostModel cm = Platform::hardware(hw, 1).cost_model(g);
  EXPECT_NEAR(cm.compute(2, 0), 1049600 * 1e-11, 1e-15);
  EXPECT_NEAR(cm.compute(3, 0), 10e-6, 1e-15);
}

}  // namespace
}  // namespace doppler
