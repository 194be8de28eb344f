// `tightfit inspect`: the text view and the JSON view show the same nodes and totals.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

#include "run_tightfit.hpp"

using import_tests::run_tightfit;

namespace {
const std::string kModel = std::string(IMPORT_TEST_DIR) + "/good/conv_relu_qdq.onnx";
}

TEST_CASE("inspect prints each node with its tensors' shape and dtype and quantization and then the totals") {
  const auto run = run_tightfit("inspect " + kModel);
  REQUIRE(run.exited);
  REQUIRE(run.status == 0);
  CHECK_THAT(run.out, Catch::Contains("Conv") && Catch::Contains("Conv+Relu (QDQ)"));
  CHECK_THAT(run.out, Catch::Contains("[4, 2, 3, 3]") && Catch::Contains("int8"));
  CHECK_THAT(run.out, Catch::Contains("4 ch: scale 0.01..0.03 zp 0"));
  CHECK_THAT(run.out, Catch::Contains("scale 0.1 zp 10"));
  CHECK_THAT(run.out, Catch::Contains("MACs 1800"));
  CHECK_THAT(run.out, Catch::Contains("totals: 3 nodes, 88 weight bytes, 750 activation bytes, 1800 MACs"));
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 100);
}

TEST_CASE("inspect --json carries the same nodes and quantization and totals") {
  const auto run = run_tightfit("inspect --json " + kModel);
  REQUIRE(run.exited);
  REQUIRE(run.status == 0);
  const auto doc = nlohmann::json::parse(run.out);
  REQUIRE(doc["nodes"].size() == 3);
  const auto& conv = doc["nodes"][1];
  CHECK(conv["op"] == "Conv");
  CHECK(conv["macs"] == 1800);
  CHECK(conv["weight_bytes"] == 88);
  CHECK(conv["clamp"] == nlohmann::json::array({10, 255}));
  CHECK(conv["inputs"][1]["quant"]["channels"] == 4);
  CHECK(conv["outputs"][0]["quant"]["zero_point"] == 10);
  CHECK(doc["totals"]["macs"] == 1800);
  CHECK(doc["totals"]["activation_bytes"] == 750);
}

TEST_CASE("inspect --json on a refused model lists every unsupported node, not only the first") {
  const std::string model = std::string(IMPORT_TEST_DIR) + "/bad/unsupported_operators.onnx";
  const auto run = run_tightfit("inspect --json " + model);
  REQUIRE(run.exited);
  CHECK(run.status == 1);
  CHECK(run.err.find('\n') == run.err.size() - 1);  // the refusal is still one line
  CHECK_THAT(run.err,
             Catch::Contains("hardmax (Hardmax): unsupported operator") && Catch::Contains("docs/operators.md"));
  const auto doc = nlohmann::json::parse(run.out);
  CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains("hardmax (Hardmax)"));
  REQUIRE(doc["unsupported"].size() == 3);
  CHECK(doc["unsupported"][0] == nlohmann::json({{"node", "hardmax"}, {"domain", ""}, {"op", "Hardmax"}}));
  CHECK(doc["unsupported"][1]["op"] == "Sin");
  CHECK_THAT(doc["unsupported"][1]["node"].get<std::string>(), Catch::StartsWith("Sin_"));  // unnamed: op and index
  CHECK(doc["unsupported"][2]["node"] == "cos");
}

TEST_CASE("inspect --json on a supported model has an empty list of unsupported nodes") {
  const auto run = run_tightfit("inspect --json " + kModel);
  REQUIRE(run.status == 0);
  CHECK(nlohmann::json::parse(run.out)["unsupported"] == nlohmann::json::array());
}
