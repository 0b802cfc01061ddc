#include "core/server_lut_index.hpp"

#include <map>
#include <utility>

namespace coinfer {

ServerLutIndex::ServerLutIndex(const Scenario& s, const LutSet& luts, const std::vector<std::vector<std::string>>& run_models) {
  std::map<std::string, int> type_ids;
  std::vector<const std::string*> types;
  for (const ServerSpec& sv : s.servers) {
    const auto [it, fresh] = type_ids.try_emplace(sv.type, static_cast<int>(types.size()));
    if (fresh) types.push_back(&sv.type);
    server_type_.push_back(it->second);
  }
  std::map<std::pair<std::string, std::string>, int> model_ids;  // (run model, dataset)
  std::vector<std::pair<std::string, std::string>> pairs;
  first_.reserve(s.devices.size() + 1);
  first_.push_back(0);
  for (std::size_t d = 0; d < s.devices.size(); ++d) {
    if (d < run_models.size())
      for (const std::string& m : run_models[d]) {
        std::pair<std::string, std::string> key{m, s.devices[d].dataset};
        const auto [it, fresh] = model_ids.try_emplace(key, static_cast<int>(pairs.size()));
        if (fresh) pairs.push_back(std::move(key));
        model_of_.push_back(it->second);
      }
    first_.push_back(model_of_.size());
  }
  tables_.assign(types.size(), std::vector<const LutTable*>(pairs.size(), nullptr));
  for (std::size_t t = 0; t < types.size(); ++t)
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const LutKey key{*types[t], pairs[k].first, pairs[k].second};
      if (luts.contains(key)) tables_[t][k] = &luts.table(key);
    }
}

const LutTable* ServerLutIndex::table(int server, int device, int binding) const {
  if (server < 0 || static_cast<std::size_t>(server) >= server_type_.size() || device < 0 || static_cast<std::size_t>(device) + 1 >= first_.size() ||
      binding < 0)
    return nullptr;
  const std::size_t at = first_[static_cast<std::size_t>(device)] + static_cast<std::size_t>(binding);
  if (at >= first_[static_cast<std::size_t>(device) + 1]) return nullptr;
  return tables_[static_cast<std::size_t>(server_type_[static_cast<std::size_t>(server)])][static_cast<std::size_t>(model_of_[at])];
}

}  // namespace coinfer
