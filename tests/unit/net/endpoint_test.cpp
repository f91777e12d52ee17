// Endpoint URLs: the one parser the validator and the engines (socket; afxdp/dpdk tx.destination)
// share, with the IP literal it holds parsed by parse_ip.
#include "net/endpoint.h"

#include <gtest/gtest.h>

#include "net/flow_matcher.h"
#include "netdaq/status.h"

using namespace netdaq;
using namespace netdaq::detail;

namespace {

TEST(Endpoint, Ipv4Literal) {
  std::string error;
  const auto ep = parse_endpoint("udp://10.0.0.2:5000", &error);
  ASSERT_TRUE(ep) << error;
  EXPECT_EQ(ep->protocol, Protocol::udp);
  EXPECT_EQ(ep->host, "10.0.0.2");
  EXPECT_EQ(ep->port, 5000);
  EXPECT_FALSE(ep->ipv6);
  EXPECT_FALSE(ep->multicast);
  ASSERT_TRUE(ep->ip);
  EXPECT_EQ(*ep->ip, *parse_ip("10.0.0.2"));
  EXPECT_EQ(ep->to_string(), "udp://10.0.0.2:5000");
}

TEST(Endpoint, Ipv6LiteralInBrackets) {
  std::string error;
  const auto ep = parse_endpoint("tcp://[ff02::1]:7", &error);
  ASSERT_TRUE(ep) << error;
  EXPECT_EQ(ep->protocol, Protocol::tcp);
  EXPECT_TRUE(ep->ipv6);
  EXPECT_TRUE(ep->multicast);
  ASSERT_TRUE(ep->ip);
  EXPECT_TRUE(ep->ip->is_v6());
  EXPECT_EQ(ep->to_string(), "tcp://[ff02::1]:7");
  EXPECT_TRUE(parse_endpoint("udp://[::ffff:1.2.3.4]:1", &error));
}

TEST(Endpoint, HostNameHasNoLiteral) {
  std::string error;
  const auto ep = parse_endpoint("udp://localhost:0", &error);
  ASSERT_TRUE(ep) << error;
  EXPECT_FALSE(ep->ip);
  EXPECT_FALSE(ep->multicast);
  EXPECT_TRUE(parse_endpoint("udp://239.1.2.3:5000", &error)->multicast);
  EXPECT_FALSE(parse_endpoint("udp://1.2.3:5000", &error)->ip);  // not a literal: a name to resolve
}

TEST(Endpoint, Refuses) {
  const std::string forms = " (expected udp://HOST:PORT or tcp://HOST:PORT; IPv6 as udp://[::1]:PORT)";
  const std::pair<const char*, std::string> cases[] = {
      {"http://1.2.3.4:5", "unknown scheme"},
      {"udp://[1.2.3.4]:5", "'1.2.3.4' is not an IPv6 address"},
      {"udp://[fd00::g]:5", "'fd00::g' is not an IPv6 address"},
      {"udp://[::1:5", "missing ']' after IPv6 address"},
      {"udp://::1:5", "IPv6 addresses must be in brackets"},
      {"udp://1.2.3.4", "missing :PORT"},
      {"udp://:5", "missing host"},
      {"udp://1.2.3.4:65536", "port must be a number 0..65535"},
  };
  for (const auto& [url, why] : cases) {
    std::string error;
    EXPECT_FALSE(parse_endpoint(url, &error)) << url;
    EXPECT_EQ(error, why + forms) << url;
  }
}

TEST(RdmaEndpoint, WithAndWithoutPort) {
  std::string error;
  auto a = parse_rdma_endpoint("rdma://10.0.0.1:7471", true, &error);
  ASSERT_TRUE(a) << error;
  EXPECT_TRUE(a->rdma);
  EXPECT_EQ(a->port, 7471);
  EXPECT_EQ(a->to_string(), "rdma://10.0.0.1:7471");
  auto b = parse_rdma_endpoint("rdma://[fd00::2]", false, &error);
  ASSERT_TRUE(b) << error;
  EXPECT_TRUE(b->ipv6);
  EXPECT_EQ(b->port, 0);
  EXPECT_FALSE(parse_rdma_endpoint("rdma://10.0.0.1", true, &error));
  EXPECT_EQ(error, "missing :PORT (expected rdma://IP:PORT; IPv6 as rdma://[fd00::1]:PORT)");
  EXPECT_FALSE(parse_rdma_endpoint("udp://10.0.0.1:5", false, &error));
  EXPECT_EQ(error, "unknown scheme (expected rdma://IP or rdma://IP:PORT; IPv6 as rdma://[fd00::1])");
  // The udp/tcp parser does not take rdma://, nor the rdma one udp://.
  EXPECT_FALSE(parse_endpoint("rdma://10.0.0.1:5", &error));
}

TEST(FlowAddresses, ParsesMatchFields) {
  FlowConfig f;
  f.id = 3;
  EXPECT_FALSE(flow_addresses(f).src);
  EXPECT_FALSE(flow_addresses(f).ipv6());
  f.match.ip_src = "10.0.0.1";
  f.match.ip_dst = "fd00::2";
  const auto a = flow_addresses(f);
  EXPECT_EQ(a.src, parse_ip("10.0.0.1"));
  EXPECT_EQ(a.dst, parse_ip("fd00::2"));
  EXPECT_TRUE(a.ipv6());
  const FlowRule r = compile_flow(f);
  EXPECT_EQ(r.src_family, 4);
  EXPECT_EQ(r.dst_family, 6);
}

TEST(FlowAddresses, NamesTheFlowAndField) {
  FlowConfig f;
  f.id = 7;
  f.match.ip_dst = "1.2.3";
  try {
    flow_addresses(f);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config);
    EXPECT_NE(std::string(e.what()).find("flow 7: match.ip_dst '1.2.3' is not an IPv4 or IPv6 address"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
