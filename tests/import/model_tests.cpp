// Every test model listed in models/manifest.json imports, agrees with the figures the model
// maker recorded, and the QDQ form of each model gives the same IR as its QOperator twin
// (same operators, shapes, quantization, clamps and weight bytes): folding QDQ is exact in the
// sense that it computes what the QLinear operators compute.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"
#include "driver/pipeline.hpp"
#include "ops/operator.hpp"

namespace fs = std::filesystem;
using namespace tightfit;

namespace {

const fs::path kModels = MODELS_DIR;

// The manifest; the test fails without it (it is committed, so a missing one is a broken checkout).
nlohmann::json read_manifest() {
  const fs::path manifest = kModels / "manifest.json";
  if (!fs::exists(manifest)) FAIL(manifest.string() << " does not exist: make it with models/regenerate");
  std::ifstream in(manifest);
  return nlohmann::json::parse(in);
}

ir::Graph import_model(const nlohmann::json& m) {
  return driver::import_graph((kModels / m.at("file").get<std::string>()).string());
}

// Everything about a tensor but its name.
void check_same_tensor(const ir::Tensor& a, const ir::Tensor& b) {
  INFO(a.name << " vs " << b.name);
  CHECK(a.dtype == b.dtype);
  CHECK(a.shape == b.shape);
  CHECK(a.quantized == b.quantized);
  CHECK(a.quant.axis == b.quant.axis);
  CHECK(a.quant.scale == b.quant.scale);
  CHECK(a.quant.zero_point == b.quant.zero_point);
  CHECK(a.is_constant == b.is_constant);
  CHECK(a.data == b.data);
}

void check_same_graph(const ir::Graph& a, const ir::Graph& b) {
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const ir::Node& x = a.nodes[i];
    const ir::Node& y = b.nodes[i];
    INFO("node " << i << ": " << x.name << " (" << x.onnx_op << ") vs " << y.name << " (" << y.onnx_op << ")");
    REQUIRE(x.op == y.op);
    CHECK(x.attrs.act_min == y.attrs.act_min);
    CHECK(x.attrs.act_max == y.attrs.act_max);
    CHECK(x.attrs.kernel_shape == y.attrs.kernel_shape);
    CHECK(x.attrs.strides == y.attrs.strides);
    CHECK(x.attrs.pads == y.attrs.pads);
    CHECK(x.attrs.group == y.attrs.group);
    CHECK(x.attrs.axis == y.attrs.axis);
    CHECK(x.attrs.perm == y.attrs.perm);
    CHECK(x.attrs.scales == y.attrs.scales);
    REQUIRE(x.inputs.size() == y.inputs.size());
    for (std::size_t k = 0; k < x.inputs.size(); ++k) check_same_tensor(a.tensors[x.inputs[k]], b.tensors[y.inputs[k]]);
    check_same_tensor(a.tensors[x.outputs[0]], b.tensors[y.outputs[0]]);
  }
}

}  // namespace

TEST_CASE("every model in models/manifest.json imports with the MACs and weight bytes its maker recorded") {
  const auto doc = read_manifest();
  REQUIRE(!doc.at("models").empty());
  for (const auto& m : doc["models"]) {
    const std::string file = m.at("file").get<std::string>();
    SECTION(file) {
      const ir::Graph g = import_model(m);
      REQUIRE(g.inputs.size() == m.at("inputs").size());
      REQUIRE(g.outputs.size() == m.at("outputs").size());
      for (std::size_t i = 0; i < g.inputs.size(); ++i)
        CHECK(g.tensors[g.inputs[i]].shape == m["inputs"][i].at("shape").get<std::vector<std::int64_t>>());
      for (std::size_t i = 0; i < g.outputs.size(); ++i)
        CHECK(g.tensors[g.outputs[i]].shape == m["outputs"][i].at("shape").get<std::vector<std::int64_t>>());
      if (m.contains("figures")) {
        std::int64_t macs = 0, weight_bytes = 0;
        for (const auto& n : g.nodes) macs += ops::macs(g, n);
        for (const auto& t : g.tensors)
          if (t.is_constant) weight_bytes += t.bytes();
        CHECK(macs == m["figures"].at("macs").get<std::int64_t>());
        CHECK(weight_bytes == m["figures"].at("weight_bytes").get<std::int64_t>());
      }
    }
  }
}

TEST_CASE("a model with a symbolic batch imports at batch 1 and names the input pinned") {
  const auto doc = read_manifest();
  int symbolic = 0;
  for (const auto& m : doc["models"]) {
    if (!m.contains("symbolic_batch")) continue;
    ++symbolic;
    const ir::Graph g = import_model(m);
    INFO(m.at("file"));
    REQUIRE(g.inputs.size() == 1);
    CHECK(g.tensors[g.inputs[0]].shape.at(0) == 1);
    CHECK(g.batch_pinned == std::vector<std::string>{m.at("inputs").at(0).at("name").get<std::string>()});
  }
  CHECK(symbolic == 2);  // conv_u8_symbatch, both forms
}

TEST_CASE("each QDQ model imports to the same IR as its QOperator twin") {
  const auto doc = read_manifest();
  std::map<std::string, nlohmann::json> by_file;
  for (const auto& m : doc.at("models")) by_file[m.at("file").get<std::string>()] = m;
  std::vector<std::pair<nlohmann::json, nlohmann::json>> twins;  // (QDQ model, its QOperator twin)
  for (const auto& m : doc["models"]) {
    if (m.at("form") != "qdq" || !m.contains("twin")) continue;
    const std::string twin = m["twin"].get<std::string>();
    INFO(m.at("file") << " names a twin the manifest does not list");
    REQUIRE(by_file.count(twin) == 1);
    twins.emplace_back(m, by_file[twin]);
  }
  if (twins.empty()) FAIL("no QDQ model of " << (kModels / "manifest.json").string() << " names a QOperator twin");
  for (const auto& [qdq, qop] : twins) {
    SECTION(qdq.at("file").get<std::string>()) { check_same_graph(import_model(qdq), import_model(qop)); }
  }
}
