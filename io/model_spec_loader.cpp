#include "io/model_spec_loader.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/text_util.hpp"
#include "io/data_root.hpp"
#include "io/yaml_util.hpp"

namespace fs = std::filesystem;

namespace coinfer {

std::string data_root() { return fs::path(data_path("models")).parent_path().string(); }

ModelCatalog ModelCatalog::load(const std::string& models_dir) {
  ModelCatalog cat;
  const std::string ds_file = (fs::path(models_dir) / "datasets.yaml").string();
  YamlReader dr(ds_file);
  YAML::Node root = dr.load_file();
  dr.check_keys(root, {"datasets"}, "");
  YAML::Node list = root["datasets"];
  if (!list || !list.IsMap()) dr.fail(root, "datasets", "expected a mapping of dataset names");
  for (auto it = list.begin(); it != list.end(); ++it) {
    const std::string name = it->first.as<std::string>();
    const YAML::Node d = it->second;  // a copy: it-> yields a temporary
    const std::string path = "datasets." + name;
    dr.check_keys(d, {"kind", "task", "nodes", "edges", "features", "classes", "source"}, path);
    DatasetSpec s;
    s.name = name;
    s.kind = dr.get_string(d, "kind", path);
    if (s.kind != "point_cloud" && s.kind != "graph" && s.kind != "image") dr.fail(d["kind"], path + ".kind", "allowed: point_cloud, graph, image");
    s.task = dr.get_string(d, "task", path);
    if (s.task != "graph_classification" && s.task != "node_classification" && s.task != "image_classification")
      dr.fail(d["task"], path + ".task", "allowed: graph_classification, node_classification, image_classification");
    if ((s.kind == "image") != (s.task == "image_classification"))
      dr.fail(d["task"], path + ".task", "image_classification is an image dataset's task, and its only one");
    s.nodes = dr.get_int(d, "nodes", path, 0, 1);
    s.edges = dr.get_int(d, "edges", path, 0, 0);
    s.features = static_cast<int>(dr.get_int(d, "features", path, 0, 1));
    s.classes = static_cast<int>(dr.get_int(d, "classes", path, 0, 1));
    s.source = dr.get_string(d, "source", path);
    if (s.nodes == 0 || s.features == 0 || s.classes == 0) dr.fail(d, path, "nodes, features and classes are required");
    cat.datasets_[name] = s;
  }
  const fs::path spec_dir = fs::path(models_dir) / "specs";
  std::vector<fs::path> files;
  if (fs::is_directory(spec_dir))
    for (const auto& e : fs::directory_iterator(spec_dir))
      if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    YamlReader r(f.string());
    YAML::Node n = r.load_file();
    r.check_keys(n, {"name", "description", "source", "datasets", "stages"}, "");
    std::string name = r.get_string(n, "name", "");
    if (cat.models_.count(name)) r.fail(n["name"], "name", "model '" + name + "' is also defined in " + cat.models_[name].file);
    ModelEntry e{f.string(), n, r.get_string_list(n, "datasets", "")};
    for (const auto& d : e.datasets)
      if (!cat.datasets_.count(d))
        r.fail(n["datasets"], "datasets", "unknown dataset '" + d + "' (datasets.yaml has: " + join(cat.dataset_names()) + ")");
    if (!n["stages"] || !n["stages"].IsSequence()) r.fail(n, "stages", "expected a list of stages");
    cat.models_[name] = e;
  }
  // Build each pair once: a broken spec fails at load, not mid-run, and a run of many devices does
  // not parse a spec per device.
  for (const auto& kv : cat.models_)
    for (const auto& d : kv.second.datasets) cat.specs_.emplace(std::make_pair(kv.first, d), cat.build(kv.first, d));
  return cat;
}

std::vector<std::string> ModelCatalog::model_names() const {
  std::vector<std::string> v;
  for (const auto& kv : models_) v.push_back(kv.first);
  return v;
}

std::vector<std::string> ModelCatalog::dataset_names() const {
  std::vector<std::string> v;
  for (const auto& kv : datasets_) v.push_back(kv.first);
  return v;
}

const std::vector<std::string>& ModelCatalog::datasets_for(const std::string& model) const {
  auto it = models_.find(split_variant_name(model).first);
  if (it == models_.end()) throw InputError("unknown model '" + model + "' (known: " + join(model_names()) + ")");
  return it->second.datasets;
}

const ModelSpec& ModelCatalog::spec(const std::string& model, const std::string& dataset) const {
  auto found = specs_.find({model, dataset});
  if (found != specs_.end()) return found->second;
  const auto [base_name, variant_name] = split_variant_name(model);
  if (model.find('@') != std::string::npos) {
    std::lock_guard<std::mutex> lock(variants_->mutex);
    auto v = variants_->specs.find({model, dataset});
    if (v != variants_->specs.end()) return v->second;
    const ModelSpec& base = spec(base_name, dataset);
    ModelVariant variant;
    try {
      variant = ModelVariant::parse(variant_name);
      check_variant_supported(base, variant);
    } catch (const std::invalid_argument& ex) {
      throw InputError("model '" + model + "': " + ex.what());
    }
    ModelSpec m = build(base_name, dataset, false);
    m.variant = variant;
    m.name = variant_model_name(base_name, variant);  // canonical: "gcn@int8+dense_mask" -> "gcn@dense_mask+int8"
    try {
      derive_costs(m);
    } catch (const std::invalid_argument& ex) {
      throw InputError("model '" + model + "': " + ex.what());
    }
    return variants_->specs.emplace(std::make_pair(model, dataset), std::move(m)).first->second;
  }
  build(model, dataset);  // throws the error that names what is wrong
  throw InputError("model '" + model + "' on '" + dataset + "' was not built when the catalog loaded");
}

ModelSpec ModelCatalog::build(const std::string& model, const std::string& dataset, bool overrides) const {
  auto it = models_.find(model);
  if (it == models_.end()) throw InputError("unknown model '" + model + "' (known: " + join(model_names()) + ")");
  const ModelEntry& e = it->second;
  if (std::find(e.datasets.begin(), e.datasets.end(), dataset) == e.datasets.end())
    throw InputError("model '" + model + "' is not defined for dataset '" + dataset + "' (its datasets: " + join(e.datasets) + ")");
  YamlReader r(e.file);
  ModelSpec m;
  m.name = model;
  m.file = e.file;
  m.dataset = datasets_.at(dataset);
  std::map<std::string, int> index_of;
  auto width = [&](const YAML::Node& v, const std::string& key) -> int {
    if (!v.IsScalar()) r.fail(v, key, "expected a positive width, 'features' or 'classes'");
    std::string t = v.as<std::string>();
    if (t == "features") return m.dataset.features;
    if (t == "classes") return m.dataset.classes;
    try {
      size_t used = 0;
      int w = std::stoi(t, &used);
      if (used == t.size() && w > 0) return w;
    } catch (const std::exception&) {
    }
    r.fail(v, key, "expected a positive width, 'features' or 'classes'");
  };
  int i = 0;
  for (const auto& st : e.node["stages"]) {
    const std::string path = "stages[" + std::to_string(i++) + "]";
    r.check_keys(st, {"name", "op",      "in",     "out",         "k",      "heads", "mode",   "kernel", "stride", "groups",
                      "act",  "squeeze", "hidden", "class_token", "window", "shift", "inputs", "task",   "flops",  "bytes_out"},
                 path);
    if (st["task"] && r.get_string(st, "task", path, "") != m.dataset.task) continue;
    StageSpec s;
    s.name = r.get_string(st, "name", path);
    if (index_of.count(s.name)) r.fail(st["name"], path + ".name", "duplicate stage name '" + s.name + "'");
    s.op = r.get_string(st, "op", path);
    if (st["in"]) s.in_width = width(st["in"], path + ".in");
    if (st["out"]) s.out_width = width(st["out"], path + ".out");
    s.k = static_cast<int>(r.get_int(st, "k", path, 0, 0));
    s.heads = static_cast<int>(r.get_int(st, "heads", path, 1, 1));
    s.pool_mode = r.get_string(st, "mode", path, "");
    s.kernel = static_cast<int>(r.get_int(st, "kernel", path, 0, 1));
    s.stride = static_cast<int>(r.get_int(st, "stride", path, 1, 1));
    s.groups = static_cast<int>(r.get_int(st, "groups", path, 1, 1));
    s.activation = r.get_string(st, "act", path, "");
    if (!s.activation.empty() && s.activation != "relu" && s.activation != "relu6" && s.activation != "hardswish")
      r.fail(st["act"], path + ".act", "allowed: relu, relu6, hardswish");
    if (st["act"] && s.op == "mlp") r.fail(st["act"], path + ".act", "an mlp's activation is GELU (no act key)");
    s.squeeze = static_cast<int>(r.get_int(st, "squeeze", path, 0, 1, 1 << 20, "channels of a squeeze-and-excitation block"));
    if (st["squeeze"] && s.op != "se") r.fail(st["squeeze"], path + ".squeeze", "only an se stage has a squeeze width");
    s.hidden = static_cast<int>(r.get_int(st, "hidden", path, 0, 1, 1 << 20, "an mlp's hidden width"));
    if (st["hidden"] && s.op != "mlp") r.fail(st["hidden"], path + ".hidden", "only an mlp stage has a hidden width");
    s.class_token = r.get_bool(st, "class_token", path, false);
    if (st["class_token"] && s.op != "patch_embed") r.fail(st["class_token"], path + ".class_token", "only a patch_embed stage has a class token");
    s.window = static_cast<int>(r.get_int(st, "window", path, 0, 1, 64, "tokens on a window's side"));
    s.shift = static_cast<int>(r.get_int(st, "shift", path, 0, 0, 63, "tokens the windows are shifted by"));
    for (const char* key : {"window", "shift"})
      if (st[key] && s.op != "attention") r.fail(st[key], path + "." + key, "only an attention stage has windows");
    for (const auto& in : r.get_string_list(st, "inputs", path)) {
      if (in == "input") {
        s.inputs.push_back(-1);
      } else if (index_of.count(in)) {
        s.inputs.push_back(index_of[in]);
      } else {
        r.fail(st["inputs"], path + ".inputs", "'" + in + "' is not an earlier stage (or 'input')");
      }
    }
    index_of[s.name] = static_cast<int>(m.stages.size());
    m.stages.push_back(s);
  }
  try {
    derive_costs(m);
  } catch (const std::invalid_argument& ex) {
    throw InputError(SourceLocation{e.file, 0, 0}, "stages", std::string(ex.what()) + " (dataset " + dataset + ")");
  }
  // Optional overrides for measured values.
  if (!overrides) return m;
  int kept = 0;
  for (const auto& st : e.node["stages"]) {
    const std::string path = "stages[" + std::to_string(kept) + "]";
    if (st["task"] && r.get_string(st, "task", path, "") != m.dataset.task) continue;
    StageSpec& s = m.stages[kept++];
    if (st["flops"]) s.flops = r.require_double(st, "flops", path, 0, false);
    if (st["bytes_out"]) s.out_bytes = r.require_double(st, "bytes_out", path, 0, false);
  }
  return m;
}

}  // namespace coinfer
