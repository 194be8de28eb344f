#include "emit/harness.hpp"

#include <fmt/format.h>

#include "ops/emission.hpp"

namespace tightfit::emit {

std::string harness(const ir::Graph& graph, const std::vector<std::string>& regions, const std::string& name,
                    bool io_in_arena) {
  std::string s =
      fmt::format("#include \"{}.hpp\"\n\n#include <cstdio>\n#include <cstring>\n#include <vector>\n\n", name);
  s += "static std::vector<char> read(const char* dir, const char* file) {\n"
       "  char path[4096];\n  std::snprintf(path, sizeof path, \"%s/%s\", dir, file);\n"
       "  std::vector<char> data;\n  if (std::FILE* f = std::fopen(path, \"rb\")) {\n"
       "    char chunk[65536];\n    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) "
       "data.insert(data.end(), chunk, chunk + n);\n"
       "    std::fclose(f);\n  }\n  return data;\n}\n\n"
       "static bool write(const char* dir, const char* file, const void* data, std::size_t bytes) {\n"
       "  char path[4096];\n  std::snprintf(path, sizeof path, \"%s/%s\", dir, file);\n"
       "  std::FILE* f = std::fopen(path, \"wb\");\n  if (!f) return false;\n"
       "  const bool ok = std::fwrite(data, 1, bytes, f) == bytes;\n  return std::fclose(f) == 0 && ok;\n}\n\n";
  const std::string ns = name + "::";
  for (std::size_t i = 0; i < graph.inputs.size(); ++i) {
    const ir::Tensor& t = graph.tensors[graph.inputs[i]];
    if (!io_in_arena) s += fmt::format("static {} input_{}[{}];\n", ctype(t.dtype), i, t.elements());
  }
  for (std::size_t i = 0; i < graph.outputs.size(); ++i) {
    const ir::Tensor& t = graph.tensors[graph.outputs[i]];
    if (!io_in_arena) s += fmt::format("static {} output_{}[{}];\n", ctype(t.dtype), i, t.elements());
  }
  s += "\nint main(int argc, char** argv) {\n  if (argc != 2) return 2;\n  const char* dir = argv[1];\n";
  for (std::size_t i = 0; i < graph.inputs.size(); ++i) {
    const ir::Tensor& t = graph.tensors[graph.inputs[i]];
    const std::string dst = io_in_arena ? fmt::format("{}input_{}()", ns, i) : fmt::format("input_{}", i);
    const std::string extra = io_in_arena ? "" : fmt::format(", input_{}", i);
    s += fmt::format(
        "  {{\n    const std::vector<char> f = read(dir, \"input_{0}.f32\");\n    const std::vector<char> raw = "
        "read(dir, \"input_{0}.raw\");\n",
        i);
    if (t.float_at_boundary)
      s += fmt::format(
          "    if (f.size() == {0} * sizeof(float)) {{\n      std::vector<float> x({0});\n"
          "      std::memcpy(x.data(), f.data(), f.size());\n      {1}set_input_{2}(x.data(){3});\n    }} else\n",
          t.elements(), ns, i, extra);
    s += fmt::format("    if (raw.size() == {0}) std::memcpy({1}, raw.data(), raw.size());\n    else return 3;\n  }}\n",
                     t.bytes(), dst);
  }
  if (io_in_arena) {
    s += fmt::format("  {}run();\n", ns);
  } else {
    std::string args;
    for (std::size_t r = 0; r < regions.size(); ++r)
      args += (r ? ", " : "") + fmt::format("{}{}_storage", ns, arena_name(regions.size(), regions[r]));
    for (std::size_t i = 0; i < graph.inputs.size(); ++i) args += fmt::format(", input_{}", i);
    for (std::size_t i = 0; i < graph.outputs.size(); ++i) args += fmt::format(", output_{}", i);
    s += fmt::format("  {}run({});\n", ns, args);
  }
  for (std::size_t i = 0; i < graph.outputs.size(); ++i) {
    const ir::Tensor& t = graph.tensors[graph.outputs[i]];
    const std::string src = io_in_arena ? fmt::format("{}output_{}()", ns, i) : fmt::format("output_{}", i);
    if (t.float_at_boundary) {
      s += fmt::format(
          "  {{\n    std::vector<float> y({0});\n    {1}get_output_{2}(y.data(){3});\n"
          "    if (!write(dir, \"output_{2}.f32\", y.data(), y.size() * sizeof(float))) return 4;\n  }}\n",
          t.elements(), ns, i, io_in_arena ? "" : fmt::format(", output_{}", i));
    } else {
      s += fmt::format("  if (!write(dir, \"output_{}.raw\", {}, {})) return 4;\n", i, src, t.bytes());
    }
  }
  s += "  return 0;\n}\n";
  return s;
}

}  // namespace tightfit::emit
