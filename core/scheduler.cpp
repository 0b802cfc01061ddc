#include "core/scheduler.hpp"

#include <mutex>

namespace coinfer {

namespace {
std::mutex& plugins_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, SchedulerPlugin>& plugins() {
  static std::map<std::string, SchedulerPlugin> p;
  return p;
}
}  // namespace

void register_scheduler_plugin(const std::string& name, SchedulerPlugin plugin) {
  std::lock_guard<std::mutex> lock(plugins_mutex());
  plugins()[name] = std::move(plugin);
}

const SchedulerPlugin* scheduler_plugin(const std::string& name) {
  std::lock_guard<std::mutex> lock(plugins_mutex());
  auto it = plugins().find(name);
  return it == plugins().end() ? nullptr : &it->second;  // entries are never removed
}

std::vector<std::string> scheduler_plugin_names() {
  std::lock_guard<std::mutex> lock(plugins_mutex());
  std::vector<std::string> names;
  for (const auto& kv : plugins()) names.push_back(kv.first);
  return names;
}

}  // namespace coinfer
