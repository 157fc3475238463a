//! "Connect an edge" (`/sites/{domain}/connect`): the values an edge sends, a key made there
//! and shown once, the recipes filled in (each the download's bytes), the live check after
//! real requests (one served, a `400` and a `403` with their reasons); and the downloaded nginx
//! configuration and Cloudflare Worker run in nginx and workerd, set up as
//! `recipes/nginx/test.sh` and `recipes/cloudflare/test.mjs` set them up, in front of the shared
//! cases' origin stub: the organisation's card to an agent, the page unchanged to a human.

use crate::console_fixtures::{person_in, Browser, PASSWORD};
use crate::edge_fixtures::{get_once, read_answer, Stubs, FIREFOX, GPTBOT};
use crate::fixtures::{free_local_addr, next_second, CardSpec, World};
use crate::harness::{server, start_server, Client, OwnServer, CLIENT_IP_HEADER};
use agentcard::domain::Role;
use agentcard::recipes::PLACEHOLDERS;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DOMAIN: &str = "connect.example";
/// The service's base host: the recipes name it.
const SERVICE_HOST: &str = "cards.test";
const CONNECT: &str = "/sites/connect.example/connect";

/// An organisation whose site has a default fragment with a card, on a service that knows its
/// base host, and its owner signed in to the console.
struct Connected {
    service: OwnServer,
    world: World,
    fragment: String,
    card: String,
    owner: Browser,
}

fn connected() -> Connected {
    let base = server();
    let service = start_server(
        &base.database_url,
        &[
            ("AGENTCARD_BASE_HOST", SERVICE_HOST),
            ("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER),
            ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8"),
        ],
    );
    let mut world = World::on(&base.database_url, service.addr);
    let site = world.site(DOMAIN);
    let fragment = world.fragment(site, "/front", true);
    world.default_fragment(site, &fragment);
    let card = world.card(CardSpec::default(), &[&fragment]);
    (service.app.delivery.cache)
        .refresh_changed(&mut base.db())
        .unwrap();
    let email = person_in(&mut base.db(), Some(&world.org_id), Role::Owner);
    let mut owner = Browser::on(service.addr);
    assert_eq!(owner.sign_in(&email, PASSWORD).status, 303);
    Connected {
        service,
        world,
        fragment,
        card,
        owner,
    }
}

/// The text between `start` and the next `end` in `page`.
fn between<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let at = page
        .find(start)
        .unwrap_or_else(|| panic!("{start} in {page}"))
        + start.len();
    &page[at..at + page[at..].find(end).unwrap()]
}

/// Text as an HTML page writes it, its character references decoded.
fn unescape(html: &str) -> String {
    let mut text = String::new();
    let mut rest = html;
    while let Some(at) = rest.find('&') {
        text.push_str(&rest[..at]);
        let end = rest[at..].find(';').map_or(at, |e| at + e);
        let decoded = match &rest[at + 1..end] {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            number => (number.strip_prefix('#'))
                .and_then(|n| n.parse().ok())
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                text.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                text.push('&');
                rest = &rest[at + 1..];
            }
        }
    }
    text + rest
}

impl Connected {
    /// A key made on the connect page; the page that showed it.
    fn make_key(&self) -> (String, String) {
        let fields = [("name", "edge of connect.example")];
        let resp = self.owner.create(CONNECT, CONNECT, &fields);
        assert_eq!(resp.status, 200, "{}", resp.text());
        let page = resp.text();
        let key = between(&page, "<p class=\"secret\" id=\"secret\">", "<").to_string();
        (key, page)
    }

    /// A recipe's file as downloaded from the connect page.
    fn download(&self, file: &str) -> String {
        let resp = self.owner.get(&format!("{CONNECT}/{file}"));
        assert_eq!(resp.status, 200, "{file}: {}", resp.text());
        let disposition = format!("attachment; filename=\"{file}\"");
        assert_eq!(resp.header("Content-Disposition"), Some(&*disposition));
        assert_eq!(
            resp.header("Content-Type"),
            Some("text/plain; charset=utf-8")
        );
        resp.text()
    }

    /// The live check once it holds `wanted` (or after 10 s).
    fn live_until(&self, wanted: &str) -> String {
        let started = Instant::now();
        loop {
            let live = self.owner.get(&format!("{CONNECT}/live")).text();
            if live.contains(wanted) || started.elapsed() > Duration::from_secs(10) {
                return live;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn the_connect_page_says_what_the_edge_sends_makes_a_key_once_and_fills_in_every_recipe() {
    let c = connected();
    let page = c.owner.get(CONNECT).text();
    assert_eq!(between(&page, "id=\"sent-partner\">", "<"), c.world.org_id);
    assert_eq!(between(&page, "id=\"sent-fragment\">", "<"), c.fragment);
    assert_eq!(between(&page, "id=\"sent-lang\">", "<"), "fr");
    for sent in ["page_url", "X-Agent-UA", "X-API-Key"] {
        assert!(page.contains(&format!("<code>{sent}</code>")), "{sent}");
    }
    let abc = format!("{SERVICE_HOST}, {}, DIRECT", c.world.org_id);
    assert_eq!(between(&page, "id=\"abc-line\">", "<"), abc);
    assert!(page.contains("No request yet."), "{page}");
    // The live key the organisation has, by its prefix; a new one made here, shown once.
    assert!(page.contains(&c.world.key[..12]), "{page}");
    let (key, made) = c.make_key();
    assert!(key.starts_with("svc_live_") && key.len() == 49, "{key}");
    assert!(!c.owner.get(CONNECT).text().contains(&key));
    // The page's recipes hold it where a file needs it; the download never does.
    let textarea = |page: &str, file: &str| {
        let start =
            format!("<textarea id=\"recipe-{file}\" rows=\"8\" readonly spellcheck=\"false\">");
        unescape(between(page, &start, "</textarea>"))
    };
    let key_file = c.download("agentcard-key.conf");
    assert!(key_file.contains("svc_live_REPLACE_WITH_YOUR_KEY"));
    assert_eq!(
        textarea(&made, "agentcard-key.conf"),
        key_file.replace("svc_live_REPLACE_WITH_YOUR_KEY", &key)
    );
    let fragment = Client::new(c.service.addr).host(SERVICE_HOST).request(
        "GET",
        &format!(
            "/fragment?partner_id={}&fragment_id={}&lang=fr",
            c.world.org_id, c.fragment
        ),
        &[("X-API-Key", &key)],
        None,
    );
    assert_eq!(
        fragment.status,
        200,
        "the key made serves: {}",
        fragment.text()
    );
    // Every file shown is the download's bytes, filled in with the site's values.
    let shown = c.owner.get(CONNECT).text();
    for file in [
        "worker.js",
        "wrangler.toml",
        "agentcard.vcl",
        "agentcard-http.conf",
        "agentcard-server.conf",
        "example-site.conf",
        "sites.toml",
    ] {
        let downloaded = c.download(file);
        assert_eq!(textarea(&shown, file), downloaded, "{file}");
        for name in PLACEHOLDERS {
            let placeholder = format!("{{{{{name}}}}}");
            assert!(!downloaded.contains(&placeholder), "{file}: {placeholder}");
        }
        let names = downloaded.contains(DOMAIN) || downloaded.contains(SERVICE_HOST);
        assert!(names, "{file} names the site or the service");
    }
    let nginx = c.download("agentcard-http.conf");
    let map = format!("\"{DOMAIN}\" \"{}\";", c.world.org_id);
    assert!(nginx.contains(&map) && nginx.contains("server \"cards.test:443\";"));
    let worker = c.download("worker.js");
    let sites = format!(
        "\"{DOMAIN}\": {{ partner_id: \"{}\", fragment_id: \"{}\", lang: \"fr\" }}",
        c.world.org_id, c.fragment
    );
    assert!(worker.contains(&sites), "{worker}");
    assert!(c
        .download("wrangler.toml")
        .contains("AGENTCARD_SERVICE = \"https://cards.test\""));
    // A file no recipe has is not found.
    assert_eq!(c.owner.get(&format!("{CONNECT}/passwd")).status, 404);
}

#[test]
fn a_site_without_a_default_is_told_to_set_one_first_and_a_viewer_reads_without_the_key_form() {
    let c = connected();
    let mut world = World::on(&server().database_url, c.service.addr);
    world.site("bare.example");
    let email = person_in(&mut server().db(), Some(&world.org_id), Role::Viewer);
    let mut viewer = Browser::on(c.service.addr);
    assert_eq!(viewer.sign_in(&email, PASSWORD).status, 303);
    let page = viewer.get("/sites/bare.example/connect");
    assert_eq!(page.status, 200);
    let page = page.text();
    assert!(page
        .contains("href=\"/sites/bare.example#default-title\">first set a default fragment</a>"));
    assert!(page.contains("id=\"no-default\""), "{page}");
    assert!(
        !page.contains("action=\"/sites/bare.example/connect\""),
        "no key form"
    );
    // The recipes keep the placeholders of what the site does not have yet.
    let worker = viewer.get("/sites/bare.example/connect/worker.js");
    assert_eq!(worker.status, 200);
    let sites = format!(
        "\"bare.example\": {{ partner_id: \"{}\", fragment_id: \"{{{{fragment_id}}}}\"",
        world.org_id
    );
    assert!(worker.text().contains(&sites), "{}", worker.text());
    // Another organisation's site is not found.
    assert_eq!(viewer.get(CONNECT).status, 404);
    assert_eq!(viewer.get(&format!("{CONNECT}/live")).status, 404);
    // The site's page and the home page's first steps lead here.
    let site = c.owner.get("/sites/connect.example").text();
    assert!(site.contains(&format!("href=\"{CONNECT}\" id=\"connect-link\"")));
    let home = c.owner.get("/").text();
    assert!(home.contains(&format!("href=\"{CONNECT}\" id=\"first-steps-connect\"")));
}

#[test]
fn the_live_check_shows_a_served_request_then_a_400_and_a_403_with_their_reasons() {
    let c = connected();
    let (key, _) = c.make_key();
    assert!(c
        .owner
        .get(&format!("{CONNECT}/live"))
        .text()
        .contains("No request yet."));
    let fragment = |query: String| {
        let service = Client::new(c.service.addr).host(SERVICE_HOST);
        let headers = [("X-API-Key", key.as_str()), ("X-Agent-UA", GPTBOT)];
        service.request("GET", &format!("/fragment?{query}"), &headers, None)
    };
    let org = &c.world.org_id;
    let page = "page_url=https%3A%2F%2Fconnect.example%2Fnews%2Ftoday";
    next_second();
    let served = fragment(format!(
        "partner_id={org}&fragment_id={}&lang=fr&{page}",
        c.fragment
    ));
    assert_eq!(served.status, 200);
    let live = c.live_until("connect.example/news/today/");
    assert!(
        live.contains("<p class=\"live-ok\" id=\"live-state\">Connected: an agent got a card.</p>"),
        "{live}"
    );
    assert!(
        live.contains("<td data-label=\"Agent\">GPTBot</td>"),
        "{live}"
    );
    assert!(
        live.contains("<td data-label=\"Status\">200</td>"),
        "{live}"
    );

    next_second();
    assert_eq!(fragment(format!("partner_id={org}&lang=fr")).status, 400);
    let live = c.live_until("fragment_id_missing");
    let fix = "Send fragment_id, the id (frg_…) of the fragment the page shows";
    assert!(
        live.contains("<td data-label=\"Status\">400</td>"),
        "{live}"
    );
    assert!(
        live.contains(&format!("<code>fragment_id_missing</code>: {fix}")),
        "{live}"
    );

    next_second();
    let other = World::on(&server().database_url, c.service.addr);
    let refused = fragment(format!(
        "partner_id={}&fragment_id={}&lang=fr",
        other.org_id, c.fragment
    ));
    assert_eq!(refused.status, 403);
    let live = c.live_until("partner_not_the_keys");
    assert!(
        live.contains("<td data-label=\"Status\">403</td>"),
        "{live}"
    );
    assert!(live.contains("<code>partner_not_the_keys</code>: partner_id is not the key"));
    // Latest first; the served one still makes the check green.
    assert!(live.find("partner_not_the_keys") < live.find("fragment_id_missing"));
    assert!(live.contains("live-ok"), "{live}");
}

/// A child process killed when dropped.
struct Running(Child);

/// Stopped with SIGTERM, so that nginx's master stops its workers (a SIGKILL leaves them
/// running, holding the test's output); killed after 10 s if it is still there.
impl Drop for Running {
    fn drop(&mut self) {
        let pid = self.0.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let started = Instant::now();
        while matches!(self.0.try_wait(), Ok(None)) && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for_port(addr: SocketAddr, child: &mut Child, what: &str) {
    let started = Instant::now();
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(child.try_wait().unwrap().is_none(), "{what} stopped");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{what} does not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agentcard-connect-{name}-{}-{}",
        std::process::id(),
        agentcard::ids::new_id("")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `text` with `from` replaced by `to`, which must be there.
#[track_caller]
fn replaced(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} is not in {text}");
    text.replace(from, to)
}

/// The page through the edge at `edge` for an agent and for a human: the agent's has the
/// organisation's card before its article, the human's is the origin's, byte for byte.
fn assert_served_through(c: &Connected, edge: SocketAddr, origin: SocketAddr, brand_line: bool) {
    let get = |addr, agent| {
        read_answer(&get_once(
            addr,
            DOMAIN,
            "/human-chrome",
            agent,
            Duration::from_secs(10),
        ))
    };
    let (_, direct) = get(origin, FIREFOX);
    let (head, human) = get(edge, FIREFOX);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(human, direct, "a human's page is the origin's");
    let (head, agent) = get(edge, GPTBOT);
    let page = String::from_utf8(agent).unwrap();
    let card = format!("<aside class=\"agentcard\" data-card-id=\"{}\"", c.card);
    let at = page
        .find(&card)
        .unwrap_or_else(|| panic!("no card in\n{head}{page}"));
    let article = page[at..].find("</aside>").unwrap() + at + "</aside>".len();
    assert!(page[article..].starts_with("<article"), "{page}");
    assert_eq!(page[article..].contains("agentcard-brand-line"), brand_line);
    // The live check shows the request the recipe sent.
    let live = c.live_until("connect.example/human-chrome/");
    assert!(
        live.contains("live-ok") && live.contains("GPTBot"),
        "{live}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs nginx: cargo test --features external-tools"
)]
fn the_nginx_recipe_downloaded_from_the_connect_page_serves_the_card_to_an_agent_only() {
    let c = connected();
    let (key, _) = c.make_key();
    let stubs = Stubs::start("ssi");
    let work = work_dir("nginx");
    let conf = work.join("conf");
    for dir in ["conf", "logs", "tmp"] {
        std::fs::create_dir_all(work.join(dir)).unwrap();
    }
    // nginx's workers run as `nobody` under a root master (recipes/nginx/test.sh).
    Command::new("chmod")
        .arg("755")
        .arg(&work)
        .status()
        .unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    // As a publisher edits the files: the origin's and the service's addresses (over plain
    // HTTP here, as test.sh reaches its stub), the key, the paths.
    let service = c.service.addr.to_string();
    let http = replaced(
        &c.download("agentcard-http.conf"),
        "server 127.0.0.1:8080;",
        &format!("server {};", stubs.origin),
    );
    let http = replaced(
        &http,
        "server \"cards.test:443\";",
        &format!("server {service};"),
    );
    let server_conf = c.download("agentcard-server.conf");
    let server_conf = replaced(
        &server_conf,
        "proxy_pass https://agentcard_service/",
        "proxy_pass http://agentcard_service/",
    );
    let server_conf: String = (server_conf.lines())
        .filter(|line| !line.trim_start().starts_with("proxy_ssl_"))
        .map(|line| format!("{line}\n"))
        .collect();
    let server_conf = server_conf
        .replace("/var/log/nginx/", &format!("{}/", path(&work.join("logs"))))
        .replace(
            "/etc/nginx/agentcard-key.conf",
            &path(&conf.join("agentcard-key.conf")),
        );
    let key_conf = replaced(
        &c.download("agentcard-key.conf"),
        "svc_live_REPLACE_WITH_YOUR_KEY",
        &key,
    );
    let edge = free_local_addr();
    let site = replaced(
        &c.download("example-site.conf"),
        "listen 80;",
        &format!("listen {edge} default_server;"),
    );
    let site = replaced(
        &site,
        "/etc/nginx/agentcard-server.conf",
        &path(&conf.join("agentcard-server.conf")),
    );
    let work_path = path(&work);
    let main = format!(
        "daemon off;\nmaster_process on;\nworker_processes 1;\npid {work_path}/nginx.pid;\n\
         error_log {work_path}/logs/error.log info;\nevents {{ worker_connections 1024; }}\n\
         http {{\n    access_log {work_path}/logs/access.log;\n\
         client_body_temp_path {work_path}/tmp/body;\n    proxy_temp_path {work_path}/tmp/proxy;\n\
         fastcgi_temp_path {work_path}/tmp/fastcgi;\n    uwsgi_temp_path {work_path}/tmp/uwsgi;\n\
         scgi_temp_path {work_path}/tmp/scgi;\n    include {work_path}/conf/agentcard-http.conf;\n\
         include {work_path}/conf/site.conf;\n}}\n"
    );
    for (name, text) in [
        ("agentcard-http.conf", http),
        ("agentcard-server.conf", server_conf),
        ("agentcard-key.conf", key_conf),
        ("site.conf", site),
        ("nginx.conf", main),
    ] {
        std::fs::write(conf.join(name), text).unwrap();
    }
    let nginx = ["/usr/sbin/nginx", "/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .expect("nginx: scripts/test.sh installs it");
    let child = Command::new(nginx)
        .arg("-p")
        .arg(&work)
        .arg("-c")
        .arg(conf.join("nginx.conf"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut nginx = Running(child);
    wait_for_port(edge, &mut nginx.0, "nginx");
    assert_served_through(&c, edge, stubs.origin, false);
    drop(nginx);
    let _ = std::fs::remove_dir_all(&work);
}

/// The router of `recipes/cloudflare/test.mjs`, the service by its host besides: the Worker's
/// card call to `http://cards.test` reaches the test's service, with that `Host`.
const ROUTER: &str = "export default {
  async fetch(request, env) {
    const { hostname } = new URL(request.url);
    if (hostname === \"cards.test\") return env.SERVICE.fetch(request);
    return env.ORIGIN.fetch(request);
  },
};
";

fn workerd_binary() -> PathBuf {
    let arch = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        _ => "64",
    };
    let binary = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "recipes/cloudflare/node_modules/@cloudflare/workerd-linux-{arch}/bin/workerd"
    ));
    assert!(
        binary.is_file(),
        "workerd: scripts/test.sh installs it (npm ci in recipes/cloudflare/)"
    );
    binary
}

#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs workerd (npm): cargo test --features external-tools"
)]
fn the_worker_downloaded_from_the_connect_page_runs_in_workerd_and_serves_the_card_to_an_agent_only(
) {
    let c = connected();
    let (key, _) = c.make_key();
    let stubs = Stubs::start("none");
    let work = work_dir("workerd");
    std::fs::write(work.join("worker.js"), c.download("worker.js")).unwrap();
    std::fs::write(work.join("router.js"), ROUTER).unwrap();
    let wrangler = c.download("wrangler.toml");
    let date = between(&wrangler, "compatibility_date = \"", "\"").to_string();
    // The service over plain HTTP, as the nginx recipe's test reaches it.
    let service_url =
        between(&wrangler, "AGENTCARD_SERVICE = \"", "\"").replace("https://", "http://");
    let edge = free_local_addr();
    let text = |value: &str| serde_json::to_string(value).unwrap();
    let config = format!(
        "using Workerd = import \"/workerd/workerd.capnp\";\n\
         const config :Workerd.Config = (\n  services = [\n\
             (name = \"agentcard\", worker = .agentcard),\n\
             (name = \"router\", worker = .router),\n\
             (name = \"origin\", external = (address = \"{origin}\", http = ())),\n\
             (name = \"service\", external = (address = \"{service}\", http = ())),\n  ],\n\
           sockets = [ (name = \"http\", address = \"{edge}\", http = (), service = \"agentcard\") ],\n);\n\
         const agentcard :Workerd.Worker = (\n\
           modules = [ (name = \"worker.js\", esModule = embed \"worker.js\") ],\n\
           compatibilityDate = {date},\n  bindings = [\n\
             (name = \"AGENTCARD_SERVICE\", text = {service_url}),\n\
             (name = \"AGENTCARD_KEY\", text = {key}),\n\
             (name = \"AGENTCARD_BUDGET_MS\", text = \"2000\"),\n  ],\n\
           globalOutbound = \"router\",\n);\n\
         const router :Workerd.Worker = (\n\
           modules = [ (name = \"router.js\", esModule = embed \"router.js\") ],\n\
           compatibilityDate = {date},\n\
           bindings = [ (name = \"ORIGIN\", service = \"origin\"), (name = \"SERVICE\", service = \"service\") ],\n);\n",
        origin = stubs.origin,
        service = c.service.addr,
        date = text(&date),
        service_url = text(&service_url),
        key = text(&key),
    );
    std::fs::write(work.join("config.capnp"), config).unwrap();
    let child = Command::new(workerd_binary())
        .args(["serve", "config.capnp"])
        .current_dir(&work)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut workerd = Running(child);
    wait_for_port(edge, &mut workerd.0, "workerd");
    assert_served_through(&c, edge, stubs.origin, true);
    drop(workerd);
    let _ = std::fs::remove_dir_all(&work);
}
