// Stage 1 of import: from a path to a ModelProto whose structure is sound.
//
// Order matters: the cheap file checks first (so a missing or empty file gets a plain message),
// then parsing, external data, opsets, our own graph-structure checks (they name the node or
// tensor, which ONNX's checker messages often do not), and only then ONNX's checker and shape
// inference, whose messages we squeeze onto one line.
#include "import/model_file.hpp"

#include <fmt/core.h>
#include <google/protobuf/stubs/logging.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "error.hpp"
#include "ops/tensor_data.hpp"

namespace tightfit::import {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw Error(fmt::format("{}: {}", path, reason));
}

// ONNX's messages span several lines (the offending NodeProto is printed after them): keep the
// first line, which says what is wrong.
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(path, "no such file");
  if (fs::is_directory(path, ec)) fail(path, "is a directory, not a model file");
  const auto size = fs::file_size(path, ec);
  if (ec) fail(path, "cannot read: " + ec.message());
  if (size == 0) fail(path, "empty file, not an ONNX model");
  if (static_cast<long long>(size) > kMaxModelBytes)
    fail(path, fmt::format("model file of {} bytes is above the limit of {} bytes", size, kMaxModelBytes));
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) fail(path, "cannot read the file");
  return bytes;
}

// Reads one external-data tensor into raw_data. The location must stay inside the model's
// folder: a model must not make tightfit read arbitrary files.
void inline_external_data(const std::string& path, onnx::TensorProto& t) {
  std::string location;
  long long offset = 0, length = -1;
  for (const auto& entry : t.external_data()) {
    try {
      if (entry.key() == "location")
        location = entry.value();
      else if (entry.key() == "offset")
        offset = std::stoll(entry.value());
      else if (entry.key() == "length")
        length = std::stoll(entry.value());
    } catch (const std::exception&) {
      fail(path,
           fmt::format("tensor '{}': external data {} '{}' is not a number", t.name(), entry.key(), entry.value()));
    }
  }
  if (location.empty()) fail(path, fmt::format("tensor '{}': external data without a location", t.name()));
  const fs::path folder = fs::weakly_canonical(fs::absolute(path)).parent_path();
  const fs::path relative(location);
  if (relative.is_absolute())
    fail(path, fmt::format("tensor '{}': external data path '{}' is absolute; it must be inside the model's folder",
                           t.name(), location));
  const fs::path file = fs::weakly_canonical(folder / relative);
  const auto [folder_end, file_it] = std::mismatch(folder.begin(), folder.end(), file.begin(), file.end());
  if (folder_end != folder.end())
    fail(path, fmt::format("tensor '{}': external data path '{}' leaves the model's folder", t.name(), location));
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    fail(path, fmt::format("tensor '{}': external data file '{}' not found", t.name(), location));
  const long long file_size = static_cast<long long>(fs::file_size(file, ec));
  if (length < 0) length = file_size - offset;
  if (offset < 0 || length < 0 || offset > file_size || length > file_size - offset)
    fail(path, fmt::format("tensor '{}': external data offset {} and length {} lie outside '{}' ({} bytes)", t.name(),
                           offset, length, location, file_size));
  if (length > kMaxModelBytes)
    fail(path, fmt::format("tensor '{}': external data of {} bytes is above the limit of {} bytes", t.name(), length,
                           kMaxModelBytes));
  std::ifstream in(file, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(length), '\0');
  in.seekg(offset);
  if (!in.read(bytes.data(), length))
    fail(path, fmt::format("tensor '{}': cannot read external data '{}'", t.name(), location));
  t.set_raw_data(std::move(bytes));
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
}

void check_opsets(const std::string& path, const onnx::ModelProto& model) {
  int default_opset = -1;
  for (const auto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") default_opset = static_cast<int>(opset.version());
  }
  if (default_opset < 0) fail(path, "the model imports no opset of the default ONNX domain");
  if (default_opset < kMinOpset || default_opset > kMaxOpset)
    fail(path, fmt::format("opset {} is not supported (supported: {} to {})", default_opset, kMinOpset, kMaxOpset));
}

// Bounds on the graph's size before anything walks it: the later stages grow faster than
// linearly in the nodes, and every name is repeated in the generated code and the report (a
// tensor's name once per step where it is live).
void check_size(const std::string& path, const onnx::GraphProto& graph) {
  if (graph.node_size() > kMaxNodes)
    fail(path, fmt::format("the graph has {} nodes, above the limit of {}", graph.node_size(), kMaxNodes));
  auto check = [&](const char* what, const std::string& name) {
    if (name.size() <= kMaxNameBytes) return;
    fail(path, fmt::format("{} '{}...': a name of {} bytes, above the limit of {}", what, name.substr(0, 32),
                           name.size(), kMaxNameBytes));
  };
  for (const auto& v : graph.input()) check("tensor", v.name());
  for (const auto& v : graph.output()) check("tensor", v.name());
  for (const auto& v : graph.value_info()) check("tensor", v.name());
  for (const auto& t : graph.initializer()) check("tensor", t.name());
  for (const auto& n : graph.node()) {
    check("node", n.name());
    for (const auto& t : n.input()) check("tensor", t);
    for (const auto& t : n.output()) check("tensor", t);
  }
}

std::string node_label(const onnx::NodeProto& n, int index) {
  return fmt::format("{} ({})", n.name().empty() ? fmt::format("{}_{}", n.op_type(), index) : n.name(), n.op_type());
}

// Sorts the nodes so that every value is produced before it is used (ONNX requires this order,
// but we accept any acyclic order), refusing inputs that nothing produces and cycles.
void sort_nodes(const std::string& path, onnx::GraphProto& graph) {
  const int count = graph.node_size();
  std::set<std::string> available;  // values known before any node runs
  for (const auto& v : graph.input()) available.insert(v.name());
  for (const auto& t : graph.initializer()) available.insert(t.name());
  std::map<std::string, int> producer;
  for (int i = 0; i < count; ++i)
    for (const auto& out : graph.node(i).output()) {
      if (out.empty()) continue;
      if (producer.count(out) || available.count(out))
        fail(path, fmt::format("{}: output '{}' is produced twice", node_label(graph.node(i), i), out));
      producer[out] = i;
    }
  for (int i = 0; i < count; ++i)
    for (const auto& in : graph.node(i).input())
      if (!in.empty() && !available.count(in) && !producer.count(in))
        fail(path, fmt::format("{}: input '{}' is not a graph input, an initializer or any node's output",
                               node_label(graph.node(i), i), in));
  for (const auto& out : graph.output())
    if (!available.count(out.name()) && !producer.count(out.name()))
      fail(path, fmt::format("tensor '{}': graph output that no node produces", out.name()));

  // Kahn's algorithm, always taking the earliest ready node so that a sorted graph keeps its order.
  std::vector<int> waiting(count, 0);
  std::vector<std::vector<int>> users(count);
  for (int i = 0; i < count; ++i)
    for (const auto& in : graph.node(i).input()) {
      auto p = producer.find(in);
      if (!in.empty() && p != producer.end()) {
        ++waiting[i];
        users[p->second].push_back(i);
      }
    }
  std::set<int> ready;
  for (int i = 0; i < count; ++i)
    if (waiting[i] == 0) ready.insert(i);
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (int u : users[i])
      if (--waiting[u] == 0) ready.insert(u);
  }
  if (static_cast<int>(order.size()) != count) {
    for (int i = 0; i < count; ++i)
      if (waiting[i] > 0)
        fail(path,
             fmt::format("{}: is part of a cycle (its inputs depend on its own output)", node_label(graph.node(i), i)));
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (int i : order) *sorted.Add() = graph.node(i);
  graph.mutable_node()->Swap(&sorted);
}

// Dimensions ONNX's checker lets through (or reports without naming the tensor): zero or negative
// sizes and element counts that overflow. Symbolic dimensions are the translator's business.
void check_dimensions(const std::string& path, const onnx::GraphProto& graph) {
  auto check_value = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    std::vector<std::int64_t> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : 1);
    checked_elements(dims, v.name());
  };
  try {
    for (const auto& t : graph.initializer()) checked_elements(tensor_dims(t), t.name());
    for (const auto& v : graph.input()) check_value(v);
    for (const auto& v : graph.output()) check_value(v);
    for (const auto& v : graph.value_info()) check_value(v);
  } catch (const Error& e) {
    fail(path, e.what());
  }
}

// ONNX's shape inference, in strict mode: a node whose declared shapes contradict each other is
// refused here. Operators of domains ONNX does not know (com.microsoft) are skipped; the
// translator computes every shape itself anyway. Debian's libonnx can crash inside it on some
// malformed models (the import fuzzer found a QLinearConv whose weights have a higher rank than
// its input: a SEGV in convPoolShapeInference), so it runs in a child process that sends the
// inferred model back through a pipe; a crash there becomes one line here.
void infer_shapes(const std::string& path, onnx::ModelProto& model) {
  int fds[2];
  if (pipe(fds) != 0) fail(path, "ONNX shape inference: cannot create a pipe");
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    fail(path, "ONNX shape inference: cannot start a process");
  }
  if (child == 0) {
    close(fds[0]);
    // Whatever a crash prints here (a sanitizer's report, say) is not for the user: the parent
    // says it in one line.
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    std::string reply;
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/false);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
      reply = "+" + model.SerializeAsString();
    } catch (const std::exception& e) {
      reply = "-" + first_line(e.what());
    }
    for (std::size_t done = 0; done < reply.size();) {
      const ssize_t n = write(fds[1], reply.data() + done, reply.size() - done);
      if (n <= 0) _exit(1);
      done += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string reply;
  char chunk[65536];
  for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    reply.append(chunk, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty())
    fail(path,
         "ONNX shape inference crashed on this model (malformed: check the ranks, attributes and weights "
         "of its Conv and pooling nodes)");
  if (reply[0] == '-') fail(path, "ONNX shape inference: " + reply.substr(1));
  if (!model.ParseFromString(reply.substr(1))) fail(path, "ONNX shape inference: the inferred model does not parse");
}

}  // namespace

onnx::ModelProto load_model(const std::string& path) {
  const std::string bytes = read_file(path);
  // Protobuf would print its own complaints on stderr; our one line is enough.
  google::protobuf::SetLogHandler(nullptr);
  onnx::ModelProto model;
  // Protobuf refuses messages nested more than 100 deep (about 30 levels of If) as it refuses
  // a truncated file or a length that runs past its message.
  if (!model.ParseFromString(bytes))
    fail(path, "not an ONNX model (the file does not parse as an ONNX protobuf; truncated, or nested too deep?)");
  if (!model.has_graph() || model.ir_version() <= 0) fail(path, "not an ONNX model (no graph or no IR version)");
  if (model.graph().node_size() == 0) fail(path, "the model's graph has no nodes");

  check_opsets(path, model);
  check_size(path, model.graph());
  long long total = static_cast<long long>(bytes.size());
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    inline_external_data(path, t);
    total += static_cast<long long>(t.raw_data().size());
    if (total > kMaxModelBytes)
      fail(path, fmt::format("the model and its external data are above the limit of {} bytes", kMaxModelBytes));
  }
  check_dimensions(path, model.graph());
  sort_nodes(path, *model.mutable_graph());

  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    fail(path, "ONNX checker: " + first_line(e.what()));
  }
  infer_shapes(path, model);
  return model;
}

}  // namespace tightfit::import
