# shellcheck shell=bash
# scripts/lib/ports.sh: free loopback ports for the servers a test starts.
#
#   free_ports N   prints N free ports of 127.0.0.1, picked by the kernel and released just
#                  before the caller's servers bind them (a server that loses one to another
#                  process must be started again on new ones).

free_ports() {
	python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))' "$1"
}
