#pragma once
// Value types naming what a server runs, instead of strings built by hand.
//   ModelKey:      a model instantiated on a dataset ("dgcnn" on "modelnet40").
//   BatchGroupKey: a ModelKey plus the split where the server part starts; only requests with equal
//                  BatchGroupKeys run in one batch (their tensors have the same shapes and stages).
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace coinfer {

struct ModelKey {
  std::string model, dataset;
  std::string to_string() const { return model + "/" + dataset; }
  bool operator<(const ModelKey& o) const { return std::tie(model, dataset) < std::tie(o.model, o.dataset); }
  bool operator==(const ModelKey& o) const { return model == o.model && dataset == o.dataset; }
  bool operator!=(const ModelKey& o) const { return !(*this == o); }
};

struct BatchGroupKey {
  ModelKey model;
  int split = 0;  // the first server stage
  int end = 0;    // the stage after the server's last: 0 = the model's end (an edge's part of pp(k,m) ends at m)
  std::string to_string() const { return model.to_string() + "/" + std::to_string(split) + (end > 0 ? "-" + std::to_string(end) : ""); }
  bool operator<(const BatchGroupKey& o) const { return std::tie(model, split, end) < std::tie(o.model, o.split, o.end); }
  bool operator==(const BatchGroupKey& o) const { return model == o.model && split == o.split && end == o.end; }
  bool operator!=(const BatchGroupKey& o) const { return !(*this == o); }
};

// Small integer ids for BatchGroupKeys, assigned in order of first use (0, 1, ...): queues compare
// ids, not strings. One registry per server (or per run); not thread-safe.
class BatchGroupIds {
 public:
  int id(const BatchGroupKey& key) {
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    const int id = static_cast<int>(keys_.size());
    ids_.emplace(key, id);
    keys_.push_back(key);
    return id;
  }
  const BatchGroupKey& key(int id) const { return keys_.at(static_cast<size_t>(id)); }
  int size() const { return static_cast<int>(keys_.size()); }

 private:
  std::map<BatchGroupKey, int> ids_;
  std::vector<BatchGroupKey> keys_;
};

}  // namespace coinfer
