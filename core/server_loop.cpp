#include "core/server_loop.hpp"

#include <cstdio>

namespace coinfer {

namespace {
ServerLoopTrace::Sink g_sink;
bool g_on = false;
}  // namespace

void ServerLoopTrace::set_sink(Sink sink) {
  g_sink = std::move(sink);
  g_on = static_cast<bool>(g_sink);
}

bool ServerLoopTrace::on() { return g_on; }

void ServerLoopTrace::write(int server, const std::string& line) {
  if (g_on) g_sink(server, line);
}

std::string ServerLoopTrace::time(double t_s) {
  char buf[40];
  std::snprintf(buf, sizeof buf, " @%.17g", t_s);
  return buf;
}

}  // namespace coinfer
