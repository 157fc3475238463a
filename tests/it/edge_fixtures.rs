//! What the edge's test modules share: `agentcard edge` as a child process, the shared cases'
//! stubs (`recipes/cases/harness.py stubs`), and the decoding of an answer and its chunked body.

use crate::fixtures::free_local_addr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The shared cases' stubs and checker.
pub const HARNESS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/recipes/cases/harness.py");

/// `harness.py stubs`: the cases' origin and card stub. Killed when dropped.
pub struct Stubs {
    child: Child,
    pub origin: SocketAddr,
    pub card: SocketAddr,
}

impl Stubs {
    /// With the include of `markup` (`none`, `esi`, `ssi`) where a page places the card.
    pub fn start(markup: &str) -> Stubs {
        let (origin, card) = (free_local_addr(), free_local_addr());
        let mut child = Command::new("python3")
            .arg(HARNESS)
            .arg("stubs")
            .args(["--origin-port", &origin.port().to_string()])
            .args(["--card-port", &card.port().to_string()])
            .args(["--markup", markup, "--budget-ms", BUDGET_MS])
            .stdout(Stdio::piped())
            .spawn()
            .expect("run python3 recipes/cases/harness.py stubs");
        let mut ready = String::new();
        let stdout = child.stdout.take().expect("the stubs' stdout");
        BufReader::new(stdout)
            .read_line(&mut ready)
            .expect("read the stubs' first line");
        assert_eq!(ready.trim(), "ready", "the stubs did not start");
        Stubs {
            child,
            origin,
            card,
        }
    }
}

impl Drop for Stubs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The delivery key the edges under test are given (recipes/cases/cases.json, `site`).
pub const CASES_KEY: &str = "svc_live_edgetestkey0123456789";
/// Generous: the tests run beside many others, and only `card-slow` waits it out.
pub const BUDGET_MS: &str = "2000";
pub const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
pub const GPTBOT: &str =
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2)";

/// `agentcard edge` with a sites file, its standard error in a file. Killed when dropped.
pub struct Edge {
    pub child: Child,
    pub addr: SocketAddr,
    pub dir: PathBuf,
}

impl Edge {
    pub fn start(
        origin: SocketAddr,
        service: SocketAddr,
        sites: &str,
        env: &[(&str, &str)],
    ) -> Edge {
        let (mut edge, started) = Edge::spawn(origin, service, sites, env);
        while TcpStream::connect(edge.addr).is_err() {
            if let Some(status) = edge.child.try_wait().unwrap() {
                panic!("agentcard edge exited ({status}): {}", edge.log());
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "edge never listened"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        edge
    }

    pub fn spawn(
        origin: SocketAddr,
        service: SocketAddr,
        sites: &str,
        env: &[(&str, &str)],
    ) -> (Edge, Instant) {
        let addr = free_local_addr();
        let dir = std::env::temp_dir().join(format!("agentcard-edge-{}", addr.port()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("sites.toml"), sites).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_agentcard"))
            .arg("edge")
            .env_remove("RUST_LOG")
            .env("AGENTCARD_EDGE_LISTEN", addr.to_string())
            .env("AGENTCARD_EDGE_ORIGIN", format!("http://{origin}"))
            .env("AGENTCARD_EDGE_SERVICE", format!("http://{service}"))
            .env("AGENTCARD_EDGE_SITES", dir.join("sites.toml"))
            .env("AGENTCARD_EDGE_BUDGET_MS", BUDGET_MS)
            .env("AGENTCARD_EDGE_KEY", CASES_KEY)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .expect("run agentcard edge");
        (Edge { child, addr, dir }, Instant::now())
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default()
    }

    /// The fail-open lines logged for `page_url`.
    pub fn fail_open_lines(&self, page_url: &str) -> Vec<String> {
        self.log()
            .lines()
            .filter(|line| line.contains("fail open: "))
            .filter(|line| line.contains(&format!(" {page_url} ")))
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Edge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One `GET` through the edge on a connection of its own (`Connection: close`): every byte
/// received until the edge closed it, or until `patience` passed without a byte.
pub fn get_once(
    edge: SocketAddr,
    host: &str,
    path: &str,
    user_agent: &str,
    patience: Duration,
) -> Vec<u8> {
    let mut stream = TcpStream::connect(edge).unwrap();
    stream.set_read_timeout(Some(patience)).unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {user_agent}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut received = Vec::new();
    let _ = stream.read_to_end(&mut received);
    received
}

/// An answer as received: its head, and its body without chunked framing.
pub fn read_answer(received: &[u8]) -> (String, Vec<u8>) {
    let at = received
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let head = String::from_utf8_lossy(&received[..at]).into_owned();
    let body = match head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        true => dechunk(&received[at..]),
        false => received[at..].to_vec(),
    };
    (head, body)
}

/// A chunked body without its framing.
pub fn dechunk(mut framed: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = framed
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a chunk line");
        let size = usize::from_str_radix(std::str::from_utf8(&framed[..line_end]).unwrap(), 16);
        let size = size.expect("a chunk size");
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&framed[line_end + 2..line_end + 2 + size]);
        framed = &framed[line_end + 2 + size + 2..];
    }
}
