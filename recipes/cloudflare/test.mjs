// recipes/cloudflare/test.mjs: worker.js under the real Workers runtime (workerd), driven by the
// shared edge cases. Run by test.sh (`node --test test.mjs`).
//
// One run: the harness's stubs (origin + card, `--markup none`) on two loopback ports; workerd
// serving worker.js on a third, with the test site, the key, the service URL and the budget as
// bindings; then `harness.py check --runtime cloudflare` (one test per case from its output),
// and the Worker's log words checked against the harness's expected causes.
//
// How workerd reaches the stubs (the only test-only configuration; worker.js is as deployed):
// the Worker's global outbound is a small router Worker. A request for a site's host
// (news.example, other.example, i.e. `fetch(request)` to the origin) goes to an ExternalServer
// service addressed at the origin stub: workerd sends it with the URL's host as the `Host`
// header, the way Cloudflare reaches a zone's origin. Anything else (the card call to
// http://127.0.0.1:<card port>) goes to a `network` service allowing "local" addresses: workerd's
// default `internet` service allows public addresses only.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const harness = path.join(repo, "recipes/cases/harness.py");

// The fixed test site (the `site` of recipes/cases/cases.json).
const KEY = "svc_live_edgetestkey0123456789";
const SITES = { "news.example": { partner_id: "org_edge", fragment_id: "frg_edge", lang: "fr" } };
const BUDGET_MS = Number(process.env.AGENTCARD_EDGE_TEST_BUDGET_MS || 1000);

const children = [];
let workdir;
let ports;
let workerdLog = "";

async function freePort() {
  const server = net.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  await once(server, "close");
  return port;
}

function start(command, args, options = {}) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
  children.push(child);
  return child;
}

async function waitForLine(child, wanted, what) {
  const lines = readline.createInterface({ input: child.stdout });
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`${what} exited (${code}) before saying ${wanted}`);
  });
  const ready = (async () => {
    for await (const line of lines) {
      if (line.trim() === wanted) return;
    }
  })();
  await Promise.race([ready, exited]);
}

async function waitForPort(port, child, what) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode})`);
    const connected = await new Promise((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (connected) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not listen on 127.0.0.1:${port} within 30 s`);
}

// The workerd binary of package.json's platform packages (those the npm package `workerd`
// itself installs; it is not used here because its lock file would have to list the macOS and
// Windows binaries too).
function workerdBinary() {
  const arch = { x64: "64", arm64: "arm64" }[process.arch] ?? process.arch;
  const name = `@cloudflare/workerd-${process.platform}-${arch}`;
  try {
    return createRequire(import.meta.url).resolve(`${name}/bin/workerd`);
  } catch {
    throw new Error(`${name} is not installed: package.json pins workerd for Linux x64 and arm64`);
  }
}

async function compatibilityDate() {
  const toml = await readFile(path.join(here, "wrangler.toml"), "utf8");
  return /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)[1];
}

const ROUTER = `// Test-only global outbound of worker.js: the origin by host, the card stub by address.
export default {
  async fetch(request, env) {
    const { hostname } = new URL(request.url);
    if (hostname === "127.0.0.1") return fetch(request); // the card stub, via "loopback"
    return env.ORIGIN.fetch(request); // a site's origin: the request's Host is kept
  },
};
`;

function capnpString(text) {
  return JSON.stringify(text); // a Cap'n Proto text literal has JSON's escapes
}

async function workerdConfig({ origin, card, edge }) {
  const date = await compatibilityDate();
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "agentcard", worker = .agentcard),
    (name = "router", worker = .router),
    (name = "origin", external = (address = "127.0.0.1:${origin}", http = ())),
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${edge}", http = (), service = "agentcard") ],
);

const agentcard :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = ${capnpString(date)},
  bindings = [
    (name = "AGENTCARD_SERVICE", text = ${capnpString(`http://127.0.0.1:${card}`)}),
    (name = "AGENTCARD_KEY", text = ${capnpString(KEY)}),
    (name = "AGENTCARD_BUDGET_MS", text = ${capnpString(String(BUDGET_MS))}),
    (name = "AGENTCARD_SITES", json = ${capnpString(JSON.stringify(SITES))}),
  ],
  globalOutbound = "router",
);

const router :Workerd.Worker = (
  modules = [ (name = "router.js", esModule = embed "router.js") ],
  compatibilityDate = ${capnpString(date)},
  bindings = [ (name = "ORIGIN", service = "origin") ],
  globalOutbound = "loopback",
);
`;
}

before(async () => {
  ports = { origin: await freePort(), card: await freePort(), edge: await freePort() };
  workdir = await mkdtemp(path.join(tmpdir(), "agentcard-cf-"));

  const stubs = start("python3", [
    harness, "stubs",
    "--origin-port", String(ports.origin),
    "--card-port", String(ports.card),
    "--markup", "none",
    "--budget-ms", String(BUDGET_MS),
  ], { stdio: ["ignore", "pipe", "inherit"] });
  await waitForLine(stubs, "ready", "harness.py stubs");

  await copyFile(path.join(here, "worker.js"), path.join(workdir, "worker.js"));
  await writeFile(path.join(workdir, "router.js"), ROUTER);
  await writeFile(path.join(workdir, "config.capnp"), await workerdConfig(ports));
  const workerd = start(workerdBinary(), ["serve", "config.capnp"], { cwd: workdir });
  workerd.stdout.setEncoding("utf8");
  workerd.stderr.setEncoding("utf8");
  workerd.stdout.on("data", (chunk) => (workerdLog += chunk));
  workerd.stderr.on("data", (chunk) => (workerdLog += chunk));
  await waitForPort(ports.edge, workerd, "workerd");
});

after(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await Promise.race([once(child, "exit"), new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }
  if (workdir) await rm(workdir, { recursive: true, force: true });
});

// Rule 1 as data: worker.js's regex holds exactly the markers of the data file.
test("the gate's regex lists the 17 markers of data/agent-markers-v0.1.txt", async () => {
  const data = await readFile(path.join(repo, "data/agent-markers-v0.1.txt"), "utf8");
  const markers = data
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#") && !line.startsWith("version:"))
    .map((line) => line.split(/\s+/)[1]);
  assert.equal(markers.length, 17);
  const source = await readFile(path.join(here, "worker.js"), "utf8");
  const literal = /^const AGENT =\s*\/\\b\(\?:([^)]*)\)\\b\/i;$/m.exec(source);
  assert.ok(literal, "worker.js defines AGENT as /\\b(?:…)\\b/i");
  assert.deepEqual(literal[1].split("|").sort(), [...markers].sort());

  const gate = new RegExp(String.raw`\b(?:${literal[1]})\b`, "i");
  for (const marker of markers) {
    assert.ok(gate.test(marker), marker);
    assert.ok(gate.test(`Mozilla/5.0 (compatible; ${marker.toLowerCase()}/1.0; +https://x)`));
    assert.ok(!gate.test(`Not${marker}`), `Not${marker}`);
    assert.ok(!gate.test(`${marker}_x`), `${marker}_x`);
    assert.ok(!gate.test(`${marker}9`), `${marker}9`);
  }
  assert.ok(gate.test("xGPTBot GPTBot"));
  assert.ok(gate.test("GPTBot-Ext") && gate.test("é GPTBot é"));
  assert.ok(!gate.test("Googlebot/2.1") && !gate.test("Mozilla/5.0 (X11; Linux x86_64)"));
  // Non-unicode `i` mode folds ASCII letters only: U+017F (long s) and U+212A (Kelvin) don't fold.
  assert.ok(!gate.test("Bytespider".replace("s", "\u017f")));
  assert.ok(!gate.test("YouBot".replace("o", "\u212a")));
});

test("the shared edge cases through workerd", async (t) => {
  const report = path.join(workdir, "report.jsonl");
  const check = start("python3", [
    harness, "check",
    "--edge", `http://127.0.0.1:${ports.edge}`,
    "--origin", `http://127.0.0.1:${ports.origin}`,
    "--card", `http://127.0.0.1:${ports.card}`,
    "--runtime", "cloudflare",
    "--report", report,
  ]);
  let output = "";
  check.stdout.setEncoding("utf8");
  check.stderr.setEncoding("utf8");
  check.stdout.on("data", (chunk) => (output += chunk));
  check.stderr.on("data", (chunk) => (output += chunk));
  const [code] = await once(check, "exit");

  const results = [];
  for (const line of output.split("\n")) {
    const ok = /^ok (\S+)/.exec(line);
    const failed = /^FAIL ([^:\s]+): (.*)$/.exec(line);
    if (ok) results.push({ name: ok[1], why: null });
    else if (failed) results.push({ name: failed[1], why: failed[2] });
  }
  assert.ok(results.length > 0, `harness.py check ran no case:\n${output}`);
  for (const { name, why } of results) {
    await t.test(name, () => {
      assert.equal(why, null, why ?? "");
    });
  }
  assert.equal(code, 0, `harness.py check failed:\n${output}`);

  // Rule 5: the Worker logs one distinct word per gated request (composed or the cause).
  await new Promise((resolve) => setTimeout(resolve, 200)); // the last lines' flush
  const expected = (await readFile(report, "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  await t.test("log words: one per gated request, none otherwise", () => {
    const words = new Set();
    for (const run of expected) {
      const lines = workerdLog
        .split("\n")
        .filter((line) => new RegExp(`^agentcard \\S+ https://news\\.example/${escape(run.case)}(?:[/?]|$)`).test(line));
      const word = run.outcome === "composed" ? "composed" : run.cause;
      if (!run.agent) {
        assert.deepEqual(lines, [], `${run.case}: not gated, nothing logged`);
      } else if (word) {
        assert.equal(lines.length, 1, `${run.case}: one log line, got ${JSON.stringify(lines)}`);
        assert.equal(lines[0].split(" ")[1], word, `${run.case}: the log word`);
        words.add(word);
      }
    }
    const all = ["composed", "no_fill", "card_error", "timeout", "unreachable", "not_html", "no_article"];
    assert.deepEqual([...words].sort(), all.sort(), "the cases cover every log word");
  });
});

function escape(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
