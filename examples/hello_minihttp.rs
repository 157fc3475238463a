//! Reference server of the load benchmark (`scripts/bench-load.sh`, target B): a bare
//! may_minihttp server that answers the benchmark's fixed ~600-byte card from a `HashMap`
//! lookup, modelled on may_minihttp's own `hello` and `techempower_no_db` examples. It is
//! the floor the fragment endpoint is measured against: same runtime, no resolution, no
//! selection, no rendering.
//!
//! Usage: `hello_minihttp [ADDR] [WORKERS]` (defaults `127.0.0.1:18081` and 2).

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use may_minihttp::{HttpService, HttpServiceFactory, Request, Response};

/// The card agentcard serves in the benchmark; nginx serves the same file.
const CARD_HTML: &str = include_str!("../scripts/bench/card.html");
const DEFAULT_ADDR: &str = "127.0.0.1:18081";
const DEFAULT_WORKERS: usize = 2;

/// Path (without the query string) → body.
type Pages = Arc<HashMap<&'static str, &'static str>>;

struct Hello {
    pages: Pages,
}

impl HttpService for Hello {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        // may_minihttp gives the target with its query; the benchmark sends every target the
        // same `/fragment?…` requests, whose query this server ignores.
        let path = req
            .path()
            .split_once('?')
            .map_or(req.path(), |(path, _)| path);
        match self.pages.get(path) {
            Some(body) => {
                rsp.header("Content-Type: text/html; charset=UTF-8")
                    .body(body);
            }
            None => {
                rsp.status_code(404, "Not Found");
            }
        }
        Ok(())
    }
}

struct HelloFactory {
    pages: Pages,
}

impl HttpServiceFactory for HelloFactory {
    type Service = Hello;

    fn new_service(&self, _id: usize) -> Hello {
        Hello {
            pages: Arc::clone(&self.pages),
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| DEFAULT_ADDR.to_string());
    let workers = match args.next().map(|w| w.parse::<usize>()) {
        None => DEFAULT_WORKERS,
        Some(Ok(w)) if w > 0 => w,
        Some(_) => {
            eprintln!("hello_minihttp: WORKERS must be a positive integer");
            std::process::exit(2);
        }
    };
    may::config().set_workers(workers).set_stack_size(0x1000);

    let pages: HashMap<&'static str, &'static str> = [
        ("/fragment", CARD_HTML),
        ("/card.html", CARD_HTML),
        ("/health", "ok"),
    ]
    .into();
    let server = match (HelloFactory {
        pages: Arc::new(pages),
    })
    .start(&addr)
    {
        Ok(server) => server,
        Err(error) => {
            eprintln!("hello_minihttp: cannot listen on {addr}: {error}");
            std::process::exit(1);
        }
    };
    eprintln!("hello_minihttp: listening on {addr} with {workers} workers");
    if server.join().is_err() {
        eprintln!("hello_minihttp: the server coroutine panicked");
        std::process::exit(1);
    }
}
