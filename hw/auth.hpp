#pragma once
// Registration challenge: the server sends a random nonce; the device answers
// HMAC-SHA256(secret, nonce + device id) in hex. A process without the shared secret cannot join.
#include <string>

namespace coinfer::hw {

std::string random_nonce_hex(int bytes = 16);  // from the OS's random source
std::string hmac_sha256_hex(const std::string& key, const std::string& message);
bool constant_time_equal(const std::string& a, const std::string& b);
// The shared secret: the contents of `file` (trailing newline dropped) if given, else the environment
// variable COINFER_SECRET. Throws std::runtime_error naming the file or variable when neither gives
// a non-empty secret.
std::string load_secret(const std::string& file);
// Throws InputError (key --secret-file) when `file` is not a regular file of this user or is readable or
// writable by group or others (mode 0600 or stricter is safe).
void check_secret_file_permissions(const std::string& file);

}  // namespace coinfer::hw
