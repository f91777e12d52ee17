#include <cstdio>
#include "netdaq/netdaq.h"
int main() { std::printf("netdaq %s\n", netdaq::version()); }
