"""The six chains a stream is sent through, started on loopback ports, one set per lane.

| chain | the client talks to | which forwards to |
|---|---|---|
| `origin` | the echo origin | |
| `nginx` | nginx | the origin |
| `haproxy` | HAProxy | the origin |
| `edge` | `agentcard edge` | the origin |
| `nginx-edge` | nginx | `agentcard edge`, then the origin |
| `haproxy-edge` | HAProxy | `agentcard edge`, then the origin |

Each (lane, chain) has an origin port of its own, so that what the origin records there was sent
by that lane's chain only. nginx and HAProxy are plain reverse proxies, as a publisher would
configure them (nginx: HTTP/1.1 and kept-alive connections upstream, `Host` passed on; HAProxy:
`mode http`, its defaults). One nginx and one HAProxy serve every lane; each chain through the
edge has an edge process of its own.
"""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHAINS = ["origin", "nginx", "haproxy", "edge", "nginx-edge", "haproxy-edge"]
EDGE_KEY = "svc_live_edgetestkey0123456789"
SITES = '[[site]]\ndomain = "news.example"\npartner_id = "org_edge"\nfragment_id = "frg_edge"\nlang = "fr"\n'


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def wait_port(port, process, name, log, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited at start: {Path(log).read_text(errors='replace')[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{name} did not listen on {port} within {seconds} s")


def nginx_server(port, upstream):
    return f"""
    upstream u{port} {{ server 127.0.0.1:{upstream}; keepalive 8; }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://u{port};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_redirect off;
        }}
    }}"""


def nginx_conf(workdir, servers):
    return f"""daemon off;
master_process on;
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/nginx-error.log crit;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_header_timeout 3s;
    client_body_timeout 3s;
    proxy_read_timeout 5s;
    client_body_temp_path {workdir}/tmp/body;
    proxy_temp_path {workdir}/tmp/proxy;
    fastcgi_temp_path {workdir}/tmp/fastcgi;
    uwsgi_temp_path {workdir}/tmp/uwsgi;
    scgi_temp_path {workdir}/tmp/scgi;
{''.join(servers)}
}}
"""


def haproxy_conf(pairs):
    out = ["global\n    maxconn 4096\n",
           ("defaults\n    mode http\n    timeout connect 2s\n    timeout client 3s\n    timeout server 5s\n"
            "    timeout http-request 3s\n")]
    for port, upstream in pairs:
        out.append(f"frontend f{port}\n    bind 127.0.0.1:{port}\n    default_backend b{port}\n"
                   f"backend b{port}\n    server s 127.0.0.1:{upstream}\n")
    return "".join(out)


class Chains:
    """Every process of the chains; `lanes[i][chain]` is (client port, origin port)."""

    def __init__(self, workdir, edge_bin, lanes):
        self.workdir = Path(workdir)
        self.processes = []
        self.lanes = []
        (self.workdir / "tmp").mkdir(parents=True, exist_ok=True)
        (self.workdir / "sites.toml").write_text(SITES)
        # Every port picked at once: ports released between two picks could be picked twice.
        fronted = ("nginx", "haproxy", "nginx-edge", "haproxy-edge")
        through_edge = ("edge", "nginx-edge", "haproxy-edge")
        ports = iter(free_ports(lanes * (len(CHAINS) + len(fronted) + len(through_edge))))
        # The card service's port: bound and held, never listening, so that a card call is
        # refused (agents' pages fail open, `unreachable`) and no other process takes the port.
        self.card_socket = socket.socket()
        self.card_socket.bind(("127.0.0.1", 0))
        card_port = self.card_socket.getsockname()[1]
        nginx_servers, haproxy_pairs, edges, origin_ports = [], [], [], []
        for _ in range(lanes):
            origins = {chain: next(ports) for chain in CHAINS}
            fronts = {chain: next(ports) for chain in fronted}
            edge_ports = {chain: next(ports) for chain in through_edge}
            lane = {"origin": (origins["origin"], origins["origin"])}
            for chain in ("nginx", "haproxy"):
                lane[chain] = (fronts[chain], origins[chain])
            lane["edge"] = (edge_ports["edge"], origins["edge"])
            for chain in ("nginx-edge", "haproxy-edge"):
                lane[chain] = (fronts[chain], origins[chain])
            for chain in ("nginx", "nginx-edge"):
                upstream = origins[chain] if chain == "nginx" else edge_ports[chain]
                nginx_servers.append(nginx_server(fronts[chain], upstream))
            for chain in ("haproxy", "haproxy-edge"):
                upstream = origins[chain] if chain == "haproxy" else edge_ports[chain]
                haproxy_pairs.append((fronts[chain], upstream))
            edges += [(edge_ports[chain], origins[chain]) for chain in edge_ports]
            origin_ports += list(origins.values())
            self.lanes.append(lane)
        self.edge_processes = []
        try:
            self.start("origin", [sys.executable, str(HERE / "origin.py"), "--dir", str(self.workdir),
                                  *map(str, origin_ports)], origin_ports[0])
            for port, origin in edges:
                env = {**{k: v for k, v in os.environ.items() if not k.startswith(("AGENTCARD_", "RUST_LOG"))},
                       "RUST_LOG": "error", "AGENTCARD_EDGE_KEY": EDGE_KEY,
                       "AGENTCARD_EDGE_LISTEN": f"127.0.0.1:{port}",
                       "AGENTCARD_EDGE_ORIGIN": f"http://127.0.0.1:{origin}",
                       "AGENTCARD_EDGE_SERVICE": f"http://127.0.0.1:{card_port}",
                       "AGENTCARD_EDGE_SITES": str(self.workdir / "sites.toml")}
                self.edge_processes.append(self.start(f"edge-{port}", [edge_bin, "edge"], port, env))
            (self.workdir / "nginx.conf").write_text(nginx_conf(self.workdir, nginx_servers))
            self.start("nginx", [nginx_binary(), "-p", str(self.workdir), "-c", str(self.workdir / "nginx.conf"),
                                 "-e", str(self.workdir / "nginx-error.log")], self.lanes[0]["nginx"][0])
            (self.workdir / "haproxy.cfg").write_text(haproxy_conf(haproxy_pairs))
            self.start("haproxy", [shutil.which("haproxy") or "/usr/sbin/haproxy", "-db", "-f",
                                   str(self.workdir / "haproxy.cfg")], self.lanes[0]["haproxy"][0])
        except BaseException:
            self.stop()
            raise

    def start(self, name, argv, port, env=None):
        log = self.workdir / f"{name}.log"
        with open(log, "ab") as out:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env)
        self.processes.append(process)
        wait_port(port, process, name, log)
        return process

    def dead_edges(self):
        return [p.args for p in self.edge_processes if p.poll() is not None]

    def stop(self):
        """Stops every process, then removes the working folder."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.card_socket.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def nginx_binary():
    return shutil.which("nginx") or "/usr/sbin/nginx"
