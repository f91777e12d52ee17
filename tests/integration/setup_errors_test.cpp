// Socket engine setup errors: each one is a netdaq::Error with a code and a message that
// names the interface, the queue and what to do.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "netns_lab.h"
#include "test_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

// Opens a session and returns the Error it throws (fails the test if none).
Error open_error(const Config& cfg) {
  try {
    Session s(cfg);
  } catch (const ConfigError& e) {
    ADD_FAILURE() << "the config was refused before the engine saw it: " << e.what();
    return e;
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "Session opened without an error";
  return Error(Errc::state, "");
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(SocketSetupErrors, UdpPortHeldByAnotherProcess) {
  const uint16_t port = free_port(SOCK_DGRAM);
  Socket holder = Socket::udp_bound("127.0.0.1", port);  // a plain socket: no SO_REUSEPORT
  ASSERT_GE(holder.fd(), 0);
  Iface rs;
  rs.address = "udp://127.0.0.1:" + std::to_string(port);
  rs.rx_queues = 1;
  const Error e = open_error(rs.build());
  EXPECT_EQ(e.code(), Errc::resource);
  EXPECT_CONTAINS(e.what(), "in use");
  EXPECT_CONTAINS(e.what(), "127.0.0.1:" + std::to_string(port));
  EXPECT_CONTAINS(e.what(), "interface 'if0'");
  EXPECT_CONTAINS(e.what(), "if0/rx0");
  EXPECT_CONTAINS(e.what(), "EADDRINUSE");
}

// A second netdaq (sockets with SO_REUSEPORT, same user) would silently share the
// datagrams; it is refused instead.
TEST(SocketSetupErrors, UdpPortHeldByAnotherSession) {
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = "udp://127.0.0.1:" + std::to_string(port);
  rs.rx_queues = 2;
  Session first(rs.build());
  const Error e = open_error(rs.build());
  EXPECT_EQ(e.code(), Errc::resource);
  EXPECT_CONTAINS(e.what(), "in use");
}

TEST(SocketSetupErrors, TcpPortHeldByAnotherListener) {
  const uint16_t port = free_port(SOCK_STREAM);
  Socket holder(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(holder.fd(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(holder.fd(), 4), 0);
  Iface rs;
  rs.address = "tcp://127.0.0.1:" + std::to_string(port);
  rs.rx_queues = 1;
  const Error e = open_error(rs.build());
  EXPECT_EQ(e.code(), Errc::resource);
  EXPECT_CONTAINS(e.what(), "in use");
  EXPECT_CONTAINS(e.what(), "tcp://127.0.0.1:" + std::to_string(port));
}

TEST(SocketSetupErrors, AddressNotOnThisHost) {
  for (const std::string address : {"udp://192.0.2.55:7000", "udp://[2001:db8::55]:7000", "tcp://192.0.2.55:7000"}) {
    SCOPED_TRACE(address);
    Iface rs;
    rs.address = address;
    rs.rx_queues = 1;
    const Error e = open_error(rs.build());
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_CONTAINS(e.what(), "not an address of this host");
    EXPECT_CONTAINS(e.what(), address);
    EXPECT_CONTAINS(e.what(), "if0/rx0");
  }
}

TEST(SocketSetupErrors, MissingMulticastInterface) {
  Iface rs;
  rs.address = "udp://239.255.10.20:" + std::to_string(free_port(SOCK_DGRAM));
  rs.rx_queues = 1;
  rs.socket.multicast_interface = "ndqnosuch0";
  const Error e = open_error(rs.build());
  EXPECT_EQ(e.code(), Errc::not_found);
  EXPECT_CONTAINS(e.what(), "'ndqnosuch0'");
  EXPECT_CONTAINS(e.what(), "no such network interface");
  EXPECT_CONTAINS(e.what(), "if0/rx0");
}

// Name resolution failure. Run in a fresh network namespace, where no DNS server is
// reachable, so the lookup fails at once whatever this host's resolver does.
TEST(SocketSetupErrors, HostNameThatDoesNotResolve) {
  NDQ_REQUIRE_ROOT();
  NetnsLab lab;
  lab.run_in(lab.a().ns, [] {
    Iface ts;
    ts.destination = "udp://no-such-host.invalid:7000";
    ts.tx_queues = 1;
    const Error e = open_error(ts.build());
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_CONTAINS(e.what(), "cannot resolve host 'no-such-host.invalid'");
    EXPECT_CONTAINS(e.what(), "if0/tx0");
  });
}

// A destination without a route: the error says so (in a namespace with no default route).
TEST(SocketSetupErrors, DestinationWithoutRoute) {
  NDQ_REQUIRE_ROOT();
  NetnsLab lab;
  lab.run_in(lab.a().ns, [] {
    Iface ts;
    ts.destination = "udp://198.51.100.7:7000";
    ts.tx_queues = 1;
    const Error e = open_error(ts.build());
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_CONTAINS(e.what(), "ENETUNREACH");
    EXPECT_CONTAINS(e.what(), "udp://198.51.100.7:7000");
  });
}

// Permission problems say what is needed. As root, the check runs on a thread that
// dropped its privileges (setresuid on that thread only: the raw syscall, not glibc's
// process-wide wrapper); as a normal user it runs as is.
template <class F>
void without_privileges(F f) {
  if (geteuid() != 0) {
    f();
    return;
  }
  std::thread t([&] {
    ASSERT_EQ(syscall(SYS_setresuid, -1, 65534, -1), 0) << std::strerror(errno);  // saved uid stays 0
    f();
    syscall(SYS_setresuid, -1, 0, -1);
  });
  t.join();
}

TEST(SocketSetupErrors, PermissionProblemsSayWhatIsNeeded) {
  without_privileges([] {
    Iface rs;
    rs.address = "udp://127.0.0.1:999";
    rs.rx_queues = 1;
    const Error e = open_error(rs.build());
    EXPECT_CONTAINS(e.what(), "permission");
    EXPECT_CONTAINS(e.what(), "CAP_NET_BIND_SERVICE");
    EXPECT_CONTAINS(e.what(), "if0/rx0");
  });
}

}  // namespace
