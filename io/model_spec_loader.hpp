#pragma once
// Reads model specs (models/specs/*.yaml) and dataset statistics (models/datasets.yaml) and instantiates
// a ModelSpec for a (model, dataset) pair. File formats: models/README.md.
#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/model_source.hpp"
#include "core/model_spec.hpp"

namespace coinfer {

class ModelCatalog : public ModelSource {
 public:
  // Loads every spec under `models_dir`/specs and `models_dir`/datasets.yaml. Throws InputError.
  static ModelCatalog load(const std::string& models_dir);

  std::vector<std::string> model_names() const override;
  std::vector<std::string> dataset_names() const;
  // A model name may carry a variant ("gcn@dense_mask+int8", core/model_variant.hpp).
  bool has_model(const std::string& model) const override { return models_.count(split_variant_name(model).first) != 0; }
  bool has_dataset(const std::string& dataset) const { return datasets_.count(dataset) != 0; }
  // Datasets the model's spec declares it runs on.
  const std::vector<std::string>& datasets_for(const std::string& model) const override;
  // The spec with all costs derived, built once per pair when the catalog loads (every declared pair
  // is built then, so a broken spec fails at load). Throws InputError for an unknown model/dataset or
  // a pair the spec does not declare, naming the allowed values. The reference lives as long as the
  // catalog. A variant ("gcn@int8") is built on first use from the base spec (its costs derived for
  // the variant; the spec file's measured flops/bytes_out overrides, taken for the base, are not
  // applied) and kept; an unknown or unsupported variant is an InputError saying why. Thread-safe.
  const ModelSpec& spec(const std::string& model, const std::string& dataset) const override;
  // A copy of spec().
  ModelSpec instantiate(const std::string& model, const std::string& dataset) const { return spec(model, dataset); }

 private:
  // Parses the YAML; `overrides`: apply the file's measured flops/bytes_out.
  ModelSpec build(const std::string& model, const std::string& dataset, bool overrides = true) const;
  struct ModelEntry {
    std::string file;
    YAML::Node node;
    std::vector<std::string> datasets;
  };
  std::map<std::string, ModelEntry> models_;
  std::map<std::string, DatasetSpec> datasets_;
  std::map<std::pair<std::string, std::string>, ModelSpec> specs_;  // (model, dataset) -> built spec
  // Variants built on demand (node stable: references stay valid); shared by copies of the catalog.
  struct VariantCache {
    std::mutex mutex;
    std::map<std::pair<std::string, std::string>, ModelSpec> specs;
  };
  std::shared_ptr<VariantCache> variants_ = std::make_shared<VariantCache>();
};

// The project whose models/ is used (io/data_root.hpp: --root, $COINFER_ROOT, the scenario's or the
// working directory's project, the installed data, the source tree). Prefer data_path() for a file.
std::string data_root();

}  // namespace coinfer
