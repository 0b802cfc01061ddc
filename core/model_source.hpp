#pragma once
// What binding a scenario asks of a model catalog (core/scenario_binding.hpp); io/model_spec_loader.hpp's
// ModelCatalog, loaded from models/, is the one the program uses. Lookups do not block.
#include <string>
#include <vector>

#include "core/model_spec.hpp"

namespace coinfer {

class ModelSource {
 public:
  virtual ~ModelSource() = default;
  virtual std::vector<std::string> model_names() const = 0;
  // A model name may carry a variant ("gcn@dense_mask+int8", core/model_variant.hpp).
  virtual bool has_model(const std::string& model) const = 0;
  // Datasets the model's spec declares it runs on.
  virtual const std::vector<std::string>& datasets_for(const std::string& model) const = 0;
  // The spec of a (model, dataset) pair, with all costs derived; InputError for an unknown or
  // undeclared pair or an unsupported variant. The reference lives as long as the source.
  virtual const ModelSpec& spec(const std::string& model, const std::string& dataset) const = 0;
};

}  // namespace coinfer
