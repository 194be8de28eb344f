#include "import/import.hpp"

#include "import/onnx_import.hpp"
#include "import/tflite_import.hpp"

namespace tightfit::import {

ir::Graph import_model(const std::string& path) {
  return is_tflite_file(path) ? import_tflite(path) : import_onnx(path);
}

}  // namespace tightfit::import
