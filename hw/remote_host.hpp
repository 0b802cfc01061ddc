#pragma once
// A host of a real testbed reached with OpenSSH's client (hw/README.md "A real testbed over SSH").
// Torch-free. Commands run on the host through its login shell, so every word we send is quoted for a
// POSIX shell (shell_quote); nothing of ours runs there but coinfer itself, tar, cat, kill, rm, tc.
// ssh runs non-interactively (BatchMode: keys only), with a connect timeout and keep-alives, so an
// unreachable host is an error within seconds, never a hang.
#include <string>
#include <vector>

#include "plumbing/child_process.hpp"
#include "hw/inventory.hpp"

namespace coinfer::hw {

// 'text' for a POSIX shell: single quotes, an embedded ' written as '\''.
std::string shell_quote(const std::string& text);
// The words quoted and joined by spaces: one command line the remote shell splits back into them.
std::string shell_words(const std::vector<std::string>& words);

class RemoteHost {
 public:
  explicit RemoteHost(InventoryHost host) : host_(std::move(host)) {}
  const InventoryHost& host() const { return host_; }
  // user@address:port, for messages.
  std::string describe() const;
  // The ssh command line running `remote_command` (a shell command line) on the host.
  std::vector<std::string> ssh_argv(const std::string& remote_command) const;
  // Runs it and waits at most `timeout_s`; stdout and stderr captured. `stdin_file` ("" = none) is
  // sent as the command's input.
  ChildResult run(const std::string& remote_command, double timeout_s, const std::string& stdin_file = "") const;
  // Runs it and writes its stdout to `out_file` (a copy of a remote file); stderr captured.
  ChildResult run_to_file(const std::string& remote_command, const std::string& out_file, double timeout_s) const;
  // Starts it in the background: stdout to `out_file`, stderr to `err_file` ("&1": with stdout).
  Child start(const std::string& remote_command, const std::string& out_file, const std::string& err_file) const;
  // The ssh client's own failure (exit 255: connection, authentication, host key) explained, or ""
  // when the remote command ran (whatever its status).
  static std::string ssh_failure(const ChildResult& r);

 private:
  InventoryHost host_;
};

}  // namespace coinfer::hw
