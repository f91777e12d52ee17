#include "engines/rdma/qp_params.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "netdaq/status.h"
#include "util/errno_text.h"

namespace netdaq::detail::rdma {

namespace {

using nlohmann::json;

json queue_json(const QueueParams& q) {
  json j{{"qpn", q.qpn}, {"psn", q.psn}};
  if (q.ring)
    j["ring"] = {{"addr", q.ring->addr}, {"rkey", q.ring->rkey}, {"slots", q.ring->slots},
                 {"stride", q.ring->stride}, {"slot_size", q.ring->slot_size}};
  if (q.ring && q.credits) j["credits"] = true;
  if (q.credit) j["credit"] = {{"addr", q.credit->addr}, {"rkey", q.credit->rkey}};
  return j;
}

// Field `key` of object j: a JSON integer in 0..T's maximum (the format's numbers are
// integers). A fraction, exponent, negative number, string or bool is refused: converting one
// would be undefined (1e300 into 32 bits) or silently wrong (true as 1).
template <class T>
T integer(const json& j, const char* key, std::optional<T> fallback = std::nullopt) {
  if (!j.contains(key)) {
    if (fallback) return *fallback;
    throw std::out_of_range(std::string("'") + key + "' is missing");
  }
  const json& v = j.at(key);
  if (!v.is_number_unsigned() || v.get<uint64_t>() > std::numeric_limits<T>::max())
    throw std::out_of_range(std::string("'") + key + "' = " + v.dump() + " is not an integer 0.." +
                            std::to_string(std::numeric_limits<T>::max()));
  return static_cast<T>(v.get<uint64_t>());
}

QueueParams queue_of(const json& j) {
  QueueParams q;
  q.qpn = integer<uint32_t>(j, "qpn");
  q.psn = integer<uint32_t>(j, "psn", 0u);
  if (q.qpn == 0 || q.qpn > 0xffffff) throw std::out_of_range("qpn " + std::to_string(q.qpn) + " is not 1..16777215");
  if (q.psn > 0xffffff) throw std::out_of_range("psn " + std::to_string(q.psn) + " is not 0..16777215");
  if (j.contains("ring")) {
    const json& r = j.at("ring");
    RingOffer o;
    o.addr = integer<uint64_t>(r, "addr");
    o.rkey = integer<uint32_t>(r, "rkey");
    o.slots = integer<uint32_t>(r, "slots");
    o.stride = integer<uint32_t>(r, "stride");
    o.slot_size = integer<uint32_t>(r, "slot_size");
    if (o.slots == 0 || o.slot_size == 0 || o.stride < o.slot_size)
      throw std::out_of_range("ring needs slots > 0 and stride >= slot_size > 0");
    q.ring = o;
    q.credits = j.value("credits", false);
  }
  if (j.contains("credit")) {
    CreditOffer c;
    c.addr = integer<uint64_t>(j.at("credit"), "addr");
    c.rkey = integer<uint32_t>(j.at("credit"), "rkey");
    q.credit = c;
  }
  return q;
}

}  // namespace

std::string gid_text(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof text);
  return text;
}

void write_params(const std::string& path, const LinkParams& p) {
  json j{{"gid", gid_text(p.gid)}, {"rx", json::array()}, {"tx", json::array()}};
  for (const auto& q : p.rx) j["rx"].push_back(queue_json(q));
  for (const auto& q : p.tx) j["tx"].push_back(queue_json(q));
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << j.dump(2) << "\n";
    if (!f) throw Error(Errc::system, "rdma.local_file " + path + ": cannot write " + tmp + ": " + errno_text(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error(Errc::system, "rdma.local_file " + path + ": rename: " + errno_text(errno));
}

std::optional<LinkParams> read_params(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::stringstream text;
  text << f.rdbuf();
  if (text.str().find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;  // created, not written yet
  try {
    const json j = json::parse(text.str());
    LinkParams p;
    const std::string gid = j.at("gid").get<std::string>();
    if (inet_pton(AF_INET6, gid.c_str(), p.gid.raw) != 1)
      throw std::invalid_argument("gid '" + gid + "' is not an IPv6-form GID (e.g. ::ffff:10.0.0.1)");
    for (const auto& q : j.value("rx", json::array())) p.rx.push_back(queue_of(q));
    for (const auto& q : j.value("tx", json::array())) p.tx.push_back(queue_of(q));
    return p;
  } catch (const std::exception& e) {
    throw Error(Errc::invalid_config, "rdma.peer_file " + path + ": " + e.what() +
                                          " (expected {\"gid\": ..., \"rx\": [{\"qpn\": ..., \"psn\": ...}], \"tx\": [...]})");
  }
}

}  // namespace netdaq::detail::rdma
