#pragma once
// The rules of a cloud tier (sim/README.md "Cloud tier"), written once for both
// engines: a request of pp(k,m) runs [0,k) on its device, [k,m) at its edge server in the edge's batch
// group of (model, k, end m), and [m,n) at the edge's cloud (servers[].cloud) in the cloud's group of
// split m, the same as pp(m) requests bound to the cloud. The simulator's device and server actors and
// the real device and edge server ask these functions; none of them blocks or advances time.
#include "core/model_key.hpp"
#include "core/strategy.hpp"

namespace coinfer {

// On the device, when a request is routed: the split m where its edge passes it on to the cloud, 0
// when it has no cloud part (not pp(k,m), or the device runs another split than the strategy's k).
int cloud_split_of(const Strategy& strategy, int device_split, int num_stages);

// At the server its upload reaches: a request routed with a cloud part, uploaded to a server without a
// cloud (a scheme moved its device meanwhile), runs [k,n) there, never half a model: its cloud split
// there (0: none).
inline int cloud_split_at_server(int cloud_split, bool server_has_cloud) { return server_has_cloud ? cloud_split : 0; }

// The stages a server runs for a request: [begin, end) — at its edge [k, m) (m = n without a cloud
// part), at the cloud [m, n).
struct ServerPart {
  int begin = 0, end = 0;
};
ServerPart server_part(int device_split, int cloud_split, bool at_cloud, int num_stages);

// The batch group of a request at its edge ((model, k) or (model, k, end m)) and at the cloud
// ((model, m)).
BatchGroupKey edge_batch_group(const ModelKey& model, int device_split, int cloud_split);
BatchGroupKey cloud_batch_group(const ModelKey& model, int cloud_split);

// A batch holding a cloud part is never forwarded to a helper device: a helper sends its results
// straight to their devices, and the cloud part would be lost.
inline bool may_forward_to_helper(int cloud_split) { return cloud_split == 0; }

// When its edge batch ends: whether the request goes on to the cloud (true) or its result to its
// device (false).
inline bool passes_to_cloud(int cloud_split, bool at_cloud) { return cloud_split > 0 && !at_cloud; }

}  // namespace coinfer
