// The middleware's sockets on loopback (ephemeral ports): round trips, timeouts, closes, limits.
#include <gtest/gtest.h>

#include <thread>

#include "hw/connection.hpp"

using namespace coinfer::hw;
using Seconds = std::chrono::duration<double>;

namespace {
struct Pair {
  std::unique_ptr<Listener> listener;
  std::unique_ptr<Connection> client, server;
  explicit Pair(std::uint32_t server_max = kDefaultMaxPayload, std::uint32_t client_max = kDefaultMaxPayload) {
    listener = std::make_unique<Listener>("127.0.0.1", 0, server_max);
    std::thread t([&] { server = listener->accept(Seconds(5)); });
    client = Connection::connect("127.0.0.1", listener->port(), Seconds(5), client_max);
    t.join();
  }
};
}  // namespace

TEST(Connection, RoundTripsSmallAndLargeFrames) {
  Pair p;
  ASSERT_TRUE(p.server);
  for (std::size_t size : {1000u, 1000000u, 5000000u}) {
    std::string payload(size, '\0');  // incompressible: every byte crosses the socket
    unsigned x = 7;
    for (auto& c : payload) c = static_cast<char>((x = x * 1103515245 + 12345) >> 24);
    std::thread echo([&] {
      auto f = p.server->receive(Seconds(10));
      ASSERT_TRUE(f);
      p.server->send(*f);
    });
    p.client->send({MsgType::task, 7, payload});
    auto back = p.client->receive(Seconds(10));
    echo.join();
    ASSERT_TRUE(back);
    EXPECT_EQ(back->task_id, 7u);
    EXPECT_EQ(back->payload, payload);
  }
  EXPECT_GT(p.client->bytes_sent(), 6000000u);
}

TEST(Connection, ReceiveTimesOutWithNothing) {
  Pair p;
  EXPECT_FALSE(p.client->receive(Seconds(0.05)));
}

TEST(Connection, PeerCloseIsReported) {
  Pair p;
  p.server.reset();
  EXPECT_THROW(p.client->receive(Seconds(2)), ConnectionClosed);
}

TEST(Connection, OversizedFrameIsAProtocolError) {
  // The server accepts at most 1024 payload bytes; the client may send more.
  Pair p(1024, kDefaultMaxPayload);
  std::string noise(5000, '\0');
  unsigned x = 1;
  for (auto& c : noise) c = static_cast<char>((x = x * 1103515245 + 12345) >> 24);
  p.client->send({MsgType::task, 0, std::string(100, 'a')});
  EXPECT_TRUE(p.server->receive(Seconds(2)));
  p.client->send({MsgType::task, 0, noise});
  EXPECT_THROW(p.server->receive(Seconds(2)), ProtocolError);
  // A sender refuses to send beyond its own limit.
  Pair q(1024, 1024);
  EXPECT_THROW(q.client->send({MsgType::task, 0, noise}), ProtocolError);
}

TEST(Connection, ConnectToClosedPortFails) {
  int port;
  {
    Listener l("127.0.0.1", 0);
    port = l.port();
  }
  EXPECT_THROW(Connection::connect("127.0.0.1", port, Seconds(1)), ConnectionClosed);
}

TEST(Connection, CloseWakesABlockedReceive) {
  Pair p;
  std::thread closer([&] {
    std::this_thread::sleep_for(Seconds(0.1));
    p.client->close();
  });
  EXPECT_THROW(p.client->receive(Seconds(10)), ConnectionClosed);
  closer.join();
}
