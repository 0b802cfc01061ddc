// Scenario events and rescheduling triggers as one struct per kind (core/one_of_kinds.hpp), the
// scenario's index types (core/indices.hpp), and enum names read both ways (core/enum_names.hpp).
#include <gtest/gtest.h>

#include <type_traits>

#include "core/enum_names.hpp"
#include "core/indices.hpp"
#include "core/mobility.hpp"
#include "core/record_field.hpp"
#include "core/scenario.hpp"
#include "sched/operator_placement.hpp"
#include "sched/rescheduler.hpp"
#include "sched/system_graph.hpp"

using namespace coinfer;

// A device index is not a server index, and neither is an int: each must be made explicitly.
static_assert(!std::is_convertible_v<DeviceIndex, ServerIndex>);
static_assert(!std::is_convertible_v<ServerIndex, DeviceIndex>);
static_assert(!std::is_convertible_v<int, DeviceIndex>);
static_assert(!std::is_convertible_v<DeviceIndex, int>);
// The rescheduler's per-device and per-server accessors take their own index, never an int or the other's.
static_assert(std::is_invocable_v<decltype(&Rescheduler::strategy), const Rescheduler&, DeviceIndex>);
static_assert(!std::is_invocable_v<decltype(&Rescheduler::strategy), const Rescheduler&, int>);
static_assert(!std::is_invocable_v<decltype(&Rescheduler::server), const Rescheduler&, ServerIndex>);
static_assert(std::is_same_v<std::invoke_result_t<decltype(&Rescheduler::server), const Rescheduler&, DeviceIndex>, ServerIndex>);
static_assert(!std::is_invocable_v<decltype(&Rescheduler::is_helper), const Rescheduler&, int>);
static_assert(!std::is_invocable_v<decltype(&Rescheduler::batching), const Rescheduler&, DeviceIndex>);

TEST(Indices, NoneByDefaultAndWithinTheirVector) {
  EXPECT_FALSE(DeviceIndex().valid());
  EXPECT_TRUE(DeviceIndex(0).valid());
  EXPECT_TRUE(ServerIndex(2).within(3));   // 0, 1, 2 of three servers
  EXPECT_FALSE(ServerIndex(3).within(3));  // one past the end
  EXPECT_FALSE(ServerIndex().within(3));   // none
  EXPECT_EQ(DeviceIndex(4).at(), 4u);
}

TEST(EventKinds, EachKindSaysItsDeviceOrServerAndItsResultsName) {
  // The names are those results.h5's /events uses (core/run_results.hpp EventRecord::kind).
  EventSpec e;
  e.what = event::ServerFail{"edge1"};
  EXPECT_EQ(e.server(), "edge1");
  EXPECT_EQ(e.device(), "");
  EXPECT_STREQ(e.kind_name(), "fail");
  EXPECT_TRUE(e.about_server());
  e.what = event::ServerRecover{"edge1"};
  EXPECT_STREQ(e.kind_name(), "recover");
  e.what = event::Load{"pi0", 0.5, "gpu"};
  EXPECT_EQ(e.device(), "pi0");
  EXPECT_EQ(e.server(), "");
  EXPECT_STREQ(e.kind_name(), "load");
  EXPECT_FALSE(e.about_server());
  EXPECT_NE(e.of_device<event::Load>("pi0"), nullptr);
  EXPECT_EQ(e.of_device<event::Load>("pi1"), nullptr);       // another device
  EXPECT_EQ(e.of_device<event::Bandwidth>("pi0"), nullptr);  // another kind
  e.what = event::Handover{"m", "b", "a"};
  EXPECT_STREQ(e.kind_name(), "handover");
  EXPECT_EQ(e.device(), "m");
  e.what = event::Bandwidth{"x", 3};
  EXPECT_STREQ(e.kind_name(), "bandwidth");
  e.what = event::Join{"x"};
  EXPECT_STREQ(e.kind_name(), "join");
  e.what = event::Leave{"x"};
  EXPECT_STREQ(e.kind_name(), "leave");
}

TEST(TriggerKinds, OnlyDeviceTriggersNameADeviceAndServerTriggersDescribeTheirServer) {
  Scenario s;
  s.devices.resize(2);
  s.devices[0].id = "a", s.devices[1].id = "b";
  s.servers.resize(2);
  s.servers[0].id = "s0", s.servers[1].id = "s1";
  const Trigger join = trigger::Join{DeviceIndex(1)};
  EXPECT_EQ(join.device().value, 1);
  EXPECT_EQ(join.describe(s), "join:b");
  const Trigger fail = trigger::ServerFail{ServerIndex(1)};
  EXPECT_FALSE(fail.device().valid());  // server 1 is not device 1
  EXPECT_EQ(fail.describe(s), "fail:s1");
  const Trigger load = trigger::Load{DeviceIndex(0), 0.4};
  EXPECT_EQ(load.describe(s), "load:a");
  EXPECT_EQ(Trigger(trigger::Period{}).describe(s), "period");
  EXPECT_EQ(Trigger(trigger::Join{DeviceIndex(7)}).describe(s), "join:?");  // out of range: no id
}

namespace {
enum class Colour { red, green, blue };
// Written out here, not taken from the code under test: what a list must hold.
constexpr auto kColours = enum_names<Colour>({"red", "green", "blue"});
constexpr auto kFromGreen = enum_names<Colour>({"green", "blue"}, Colour::green);  // red has no name
// Lists that break the rule names_each_of checks: a value missing at the end, a name twice.
constexpr auto kShort = enum_names<Colour>({"red", "green"});
constexpr auto kNameTwice = enum_names<Colour>({"red", "red", "blue"});
}  // namespace

static_assert(kColours.names_each_of(Colour::red, Colour::blue));
static_assert(kFromGreen.names_each_of(Colour::green, Colour::blue));
static_assert(!kFromGreen.names_each_of(Colour::red, Colour::blue));  // it does not start at red
static_assert(!kShort.names_each_of(Colour::red, Colour::blue));
static_assert(!kNameTwice.names_each_of(Colour::red, Colour::blue));
static_assert(!kColours.names_each_of(Colour::red, Colour::green));  // blue lies beyond the range given

TEST(EnumNames, ReadBothWaysAndListedInTheirOrder) {
  EXPECT_STREQ(kColours.name(Colour::green), "green");
  EXPECT_STREQ(kFromGreen.name(Colour::blue), "blue");
  EXPECT_STREQ(kFromGreen.name(Colour::red), "?");                   // a value the list does not name
  EXPECT_STREQ(kFromGreen.name(Colour::red, "unknown"), "unknown");  // ... with the caller's word for it
  EXPECT_STREQ(kColours.name(static_cast<Colour>(7)), "?");          // an integer cast to no value
  EXPECT_EQ(kColours.value("blue"), Colour::blue);
  EXPECT_EQ(kFromGreen.value("green"), Colour::green);
  EXPECT_FALSE(kColours.value("Blue").has_value());  // exact, case-sensitive
  EXPECT_FALSE(kColours.value("").has_value());
  EXPECT_EQ(kColours.listed(), "red, green, blue");
}

TEST(EnumNames, TheProjectsNamesAreTheOnesItsFilesUse) {
  // Names that files and messages carry (results.h5's schema, scenario keys, placement rules, feature
  // normalisations): a renamed value would break files written before.
  EXPECT_STREQ(field_kind_name(FieldKind::json_object), "json_object");
  EXPECT_STREQ(mid_transfer_name(MobilitySpec::MidTransfer::resend), "resend");
  EXPECT_STREQ(normalisation_name(FeatureNormalisation::Kind::log_minmax), "log_minmax");
  EXPECT_STREQ(system_node_type_name(SystemNodeType::middleware), "middleware");
  for (PlacementRule r : all_placement_rules()) EXPECT_EQ(parse_placement_rule(rule_name(r)), r) << rule_name(r);
  EXPECT_EQ(rule_name(PlacementRule::accelerator_only), "accelerator_only");
  try {
    parse_placement_rule("fastest");
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(allowed: cpu_only, accelerator_only, greedy, dp, codl, graphsplit)"), std::string::npos) << e.what();
  }
}
