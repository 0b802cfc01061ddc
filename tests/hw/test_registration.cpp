// The server's registration check and handshake gate, without sockets.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "hw/auth.hpp"
#include "hw/registration.hpp"

using namespace coinfer;
using namespace coinfer::hw;

namespace {
Scenario two_servers() {
  Scenario sc;
  sc.name = "reg";
  for (const char* id : {"edge", "other"}) {
    ServerSpec s;
    s.id = id;
    sc.servers.push_back(s);
  }
  for (auto [id, server] : {std::pair{"pi0", "edge"}, std::pair{"pi1", "other"}}) {
    DeviceSpec d;
    d.id = id;
    d.type = "rpi4b";
    d.model = "dgcnn";
    d.dataset = "modelnet40";
    d.server = server;
    sc.devices.push_back(d);
  }
  return sc;
}

Registration signed_as(const std::string& id, const std::string& secret, const std::string& nonce) {
  Registration r{id, "rpi4b", "dgcnn", "modelnet40", true, ""};
  r.hmac = hmac_sha256_hex(secret, nonce + id);
  return r;
}
}  // namespace

TEST(Registration, AcceptsTheRightDeviceAndNamesEveryRefusal) {
  const Scenario sc = two_servers();
  const std::string nonce = "abc123";
  auto ok = check_registration(signed_as("pi0", "s3cret", nonce), nonce, "s3cret", sc, 0);
  EXPECT_TRUE(ok.accepted()) << ok.refusal;
  EXPECT_EQ(ok.device_index, 0);
  auto refusal = [&](Registration r, const std::string& secret = "s3cret") {
    return check_registration(r, nonce, secret, sc, 0).refusal;
  };
  EXPECT_NE(refusal(signed_as("pi0", "s3cret", nonce), "other").find("wrong secret"), std::string::npos);
  EXPECT_NE(refusal(signed_as("pi0", "s3cret", "another nonce")).find("wrong secret"), std::string::npos);  // replayed
  EXPECT_NE(refusal(signed_as("ghost", "s3cret", nonce)).find("unknown device 'ghost'"), std::string::npos);
  EXPECT_NE(refusal(signed_as("pi1", "s3cret", nonce)).find("belongs to server 'other'"), std::string::npos);
  Registration wrong_type = signed_as("pi0", "s3cret", nonce);
  wrong_type.type = "tx2";
  EXPECT_NE(refusal(wrong_type).find("registered as type 'tx2'"), std::string::npos);
  Registration wrong_model = signed_as("pi0", "s3cret", nonce);
  wrong_model.model = "gcn";
  EXPECT_NE(refusal(wrong_model).find("does not have model gcn/modelnet40"), std::string::npos);
}

TEST(HandshakeGate, AdmitsUpToTheLimitAndWaitsForTheRunningOnes) {
  HandshakeGate gate(2);
  EXPECT_TRUE(gate.try_enter());
  EXPECT_TRUE(gate.try_enter());
  EXPECT_FALSE(gate.try_enter());  // a third at once is refused
  gate.leave();
  EXPECT_TRUE(gate.try_enter());
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    gate.wait_idle();
    waited = true;
  });
  gate.leave();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(waited);  // one still running
  gate.leave();
  waiter.join();
  EXPECT_TRUE(waited);
}
