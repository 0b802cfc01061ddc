#pragma once
// Helpers shared by the unit tests: the project's model catalog, fresh temporary folders and a board
// with a GPU and a CPU.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "core/device_hardware.hpp"
#include "core/lut.hpp"
#include "core/record_field.hpp"
#include "core/request_record.hpp"
#include "core/scenario.hpp"
#include "core/input_error.hpp"
#include "io/device_profile_loader.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer::test {

// The catalog of the source tree's models/ (loaded once per test process).
inline const ModelCatalog& catalog() {
  static const ModelCatalog c = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models");
  return c;
}

// The folders temp_dir made, removed with their contents when the test process exits normally (only by
// the process that made them: a forked child that exits leaves its parent's folders alone).
class TempDirs {
 public:
  static TempDirs& instance() {
    static TempDirs dirs;
    return dirs;
  }
  void add(const std::string& dir) {
    std::lock_guard<std::mutex> lock(mutex_);
    dirs_.push_back(dir);
  }
  ~TempDirs() {
    if (getpid() != owner_) return;
    std::error_code ignored;
    for (const auto& d : dirs_) std::filesystem::remove_all(d, ignored);
  }

 private:
  TempDirs() : owner_(getpid()) {}
  pid_t owner_;
  std::mutex mutex_;
  std::vector<std::string> dirs_;
};

// A new empty folder /tmp/coinfer-<what>-XXXXXX, removed when the test process exits. Aborts the test
// process (throws) when the folder cannot be made.
// A square "image" dataset named "tiny" of `pixels` (side x side) pixels of `channels` channels, for the
// image and transformer models' hand-worked costs.
inline DatasetSpec tiny_images(long long pixels, int channels, int classes) {
  DatasetSpec d;
  d.name = "tiny";
  d.kind = "image";
  d.task = "image_classification";
  d.nodes = pixels;
  d.features = channels;
  d.classes = classes;
  return d;
}

inline std::string temp_dir(const std::string& what = "unit") {
  std::string tmpl = "/tmp/coinfer-" + what + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot make " + tmpl);
  TempDirs::instance().add(tmpl);
  return tmpl;
}

// A request of device index `device` created at `created` s whose result came at `result` s (NAN: none
// came); every other field its default.
inline RequestRecord request(int device, double created, double result) {
  RequestRecord r;
  r.device = device;
  r.t_created = created;
  r.t_result = result;
  return r;
}

// A device `id` on a link of `mbps` Mbit/s following `strategy`; every other field its default.
inline DeviceSpec device_spec(const std::string& id, double mbps, const Strategy& strategy) {
  DeviceSpec d;
  d.id = id;
  d.link.bandwidth_mbps = mbps;
  d.strategy = strategy;
  return d;
}

// A board of two processors named (and of the kinds) `first`, its default, and `second`, in one
// memory of `capacity_bytes` (0: no limit), zero copy; gpu_cpu_board is a Jetson's.
inline DeviceHardware two_processor_board(const std::string& first, const std::string& second, double capacity_bytes = 0) {
  DeviceHardware hw;
  hw.processors = {first, second};
  hw.kinds = {first, second};
  hw.pool_of = {0, 0};
  hw.pool_capacity_bytes = {capacity_bytes};
  hw.pool_names = {"memory"};
  return hw;
}
inline DeviceHardware gpu_cpu_board(double capacity_bytes = 0) { return two_processor_board("gpu", "cpu", capacity_bytes); }

// gpu_cpu_board where each tensor moved between the processors takes copy_ms (> 0: a copy
// interconnect; the bytes' part is negligible, < 1e-9 s), else zero copy.
inline DeviceHardware gpu_cpu_board_with_copies(double copy_ms) {
  DeviceHardware hw = gpu_cpu_board();
  hw.zero_copy = copy_ms <= 0;
  hw.copy_latency_s = copy_ms * 1e-3;
  hw.copy_bytes_per_s = 1e15;
  return hw;
}

// A synthesised table of gcn/mr on `processor` of the type "board" whose stage s takes ms[s] and whose
// every range is the sum of its stages (batch 1 only).
inline LutTable summed_stage_table(const std::string& processor, const std::vector<double>& ms) {
  const int n = static_cast<int>(ms.size());
  LutTable t({"board", "gcn", "mr", processor}, n, 1);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j <= n; ++j) {
      double s = 0;
      for (int k = i; k < j; ++k) s += ms[static_cast<size_t>(k)] * 1e-3;
      t.set_latency(i, j, 1, {s, s, s, 0, 1});
    }
  t.provenance().kind = "synthesised";
  return t;
}

// Writes `text` (a device profiles file) to `file` and expects load_device_profiles to refuse it with a
// message that contains `fragment` (a gtest failure otherwise).
inline void expect_profiles_refused(const std::string& file, const std::string& text, const std::string& fragment) {
  std::ofstream(file) << text;
  try {
    load_device_profiles(file);
    ADD_FAILURE() << "accepted: " << text;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// Two tables equal row by row over the fields results.h5 stores (core/record_field.hpp): integers and
// text exactly, numbers bit for bit with NaN equal to NaN; a field with `present` is compared only where
// the expected row has it. `what` names the table in failures.
template <class R>
void expect_same_rows(const std::vector<R>& expected, const std::vector<R>& got, const std::vector<RecordField<R>>& fields, const std::string& what) {
  ASSERT_EQ(expected.size(), got.size()) << what;
  for (size_t i = 0; i < expected.size(); ++i)
    for (const RecordField<R>& f : fields) {
      if (!f.in_results_h5 || (f.present && !f.present(expected[i]))) continue;
      if (f.is_text()) {
        ASSERT_EQ(f.get_text(expected[i]), f.get_text(got[i])) << what << "." << f.name << " of row " << i;
      } else if (f.is_number()) {
        const double a = f.get_real(expected[i]), b = f.get_real(got[i]);
        ASSERT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << what << "." << f.name << " of row " << i << ": " << a << " against " << b;
      } else {
        ASSERT_EQ(f.get_int(expected[i]), f.get_int(got[i])) << what << "." << f.name << " of row " << i;
      }
    }
}

}  // namespace coinfer::test
