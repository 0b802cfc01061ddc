// coinfer schema: the columns of results.h5 and sweep.h5's metrics, and the keys of decisions.jsonl and of the real runtime's
// records journal, from the records' field tables (core/record_field.hpp): what the files hold,
// printed by the code that writes them. The Python loader (python/coinfer) is checked against it
// (tests/golden/python_loader.sh).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "core/run_results.hpp"
#include "io/predictor_samples.hpp"
#include "io/sweep_table.hpp"

namespace coinfer::cli {

namespace {

template <class R>
nlohmann::ordered_json columns(const std::vector<RecordField<R>>& fields, bool results_h5) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const RecordField<R>& f : fields) {
    if (results_h5 ? !f.in_results_h5 : !f.in_json) continue;
    nlohmann::ordered_json c{{"name", results_h5 ? f.dataset() : f.name}, {"kind", field_kind_name(f.kind)}, {"unit", f.unit}};
    if (results_h5 && f.present) c["only_when_some_row_has_it"] = true;
    if (!results_h5 && f.required) c["required"] = true;
    out.push_back(c);
  }
  return out;
}

nlohmann::ordered_json schema() {
  nlohmann::ordered_json servers = columns(server_result_fields(), true);
  servers.insert(servers.begin(), nlohmann::ordered_json{{"name", "id"}, {"kind", "text"}, {"unit", ""}});
  return {{"results.h5",
           {{"requests", columns(request_fields(), true)},
            {"devices", columns(device_result_fields(), true)},
            {"servers", servers},
            {"events", columns(event_fields(), true)},
            {"decisions", columns(decision_fields(), true)},
            {"bandwidth", columns(bandwidth_fields(), true)}}},
          {"sweep.h5", {{"/", columns(sweep_point_fields(), true)}, {"metrics", columns(sweep_metric_fields(), true)}}},
          {"predictor samples", {{"samples", columns(predictor_sample_fields(), true)}}},
          {"decisions.jsonl", columns(decision_fields(), false)},
          {"records journal", columns(request_fields(), false)}};
}

}  // namespace

void register_schema(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("schema",
                                     "the columns of results.h5 and the keys of decisions.jsonl and of the records journal "
                                     "(from the tables that write them; sim/README.md explains each)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "as one JSON document: {file: {group: [{name, kind, unit}]}}");
  cmd->callback([&exit_code, json] {
    exit_code = guarded([json] {
      const nlohmann::ordered_json s = schema();
      if (*json) {
        std::cout << s.dump(2) << "\n";
        return 0;
      }
      auto table = [](const std::string& title, const nlohmann::ordered_json& cols) {
        std::printf("%s\n", title.c_str());
        for (const auto& c : cols)
          std::printf("  %-26s %-12s %s\n", c["name"].get<std::string>().c_str(), c["kind"].get<std::string>().c_str(),
                      c["unit"].get<std::string>().c_str());
      };
      for (const auto& [group, cols] : s["results.h5"].items()) table("results.h5 /" + group, cols);
      table("sweep.h5 /metrics (also sweep.csv's columns after ok)", s["sweep.h5"]["metrics"]);
      table("sweep.h5 /point, /seed, /ok", s["sweep.h5"]["/"]);
      table("predictor samples (coinfer predictor samples) /samples", s["predictor samples"]["samples"]);
      table("decisions.jsonl (one object per line)", s["decisions.jsonl"]);
      table("records journal (hw/: one object per line, with \"ev\": created|done)", s["records journal"]);
      return 0;
    });
  });
}

}  // namespace coinfer::cli
