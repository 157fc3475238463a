// agentcard edge recipe for Cloudflare Workers (ES module syntax).
//
// In front of a publisher's site: humans and other bots go to the origin untouched; a
// request from a known AI agent (agent markers v0.1) to a listed site gets the page with an
// agentcard card placed immediately before its first <article>, and a brand line as the first
// element inside it. Any failure serves the page as the origin sent it and logs one word.
//
// Configuration (wrangler.toml / dashboard):
//   AGENTCARD_SERVICE    agentcard's base URL, e.g. "https://cards.agentcard.example"
//   AGENTCARD_KEY        the delivery key, a secret: `wrangler secret put AGENTCARD_KEY`
//   AGENTCARD_BUDGET_MS  optional, the card call's budget in milliseconds (default 2500)
//   AGENTCARD_SITES      optional, replaces SITES below (JSON: the same shape)

// The sites this Worker composes pages for: the request's host (lowercased, no port) →
// the fragment call's parameters. A host not listed here passes through untouched.
// EDIT: each {{…}} with your values (the console's "Connect an edge" page fills them in).
const SITES = {
  "{{domain}}": { partner_id: "{{partner_id}}", fragment_id: "{{fragment_id}}", lang: "{{lang}}" },
};

// Rule 1: the 17 markers of agent markers v0.1, case-insensitive, on word boundaries (word
// characters are ASCII letters, digits and `_`; anything else is a boundary).
const AGENT =
  /\b(?:GPTBot|ClaudeBot|CCBot|Bytespider|Meta-ExternalAgent|AI2Bot|ChatGPT-User|Claude-User|Perplexity-User|MistralAI-User|Meta-ExternalFetcher|OAI-SearchBot|Claude-SearchBot|PerplexityBot|YouBot|DuckAssistBot|Amazonbot)\b/i;

const DEFAULT_BUDGET_MS = 2500; // rule 5: about 2500 ms on serverless platforms
const CALL_USER_AGENT = "agentcard-worker/1"; // benign: bot protection may block agents' UAs
const AGENT_CACHE_CONTROL = "public, max-age=0, must-revalidate"; // rule 6

export default {
  async fetch(request, env, ctx) {
    // On an exception in this code, Cloudflare sends the request to the origin as if the
    // Worker were not there.
    ctx.passThroughOnException();

    const userAgent = request.headers.get("User-Agent") || "";
    const gatedMethod = request.method === "GET" || request.method === "HEAD";
    if (!gatedMethod || !AGENT.test(userAgent)) {
      return fetch(request); // humans and other bots: untouched, nothing added
    }
    const url = new URL(request.url);
    const host = url.hostname.toLowerCase(); // URL.hostname never carries the port
    const site = sites(env)[host];
    if (!site) {
      return fetch(request);
    }

    // A HEAD gets the headers its GET would (rule 6), and no card call.
    if (request.method === "HEAD") {
      const page = await fetch(request);
      if (!(page.status === 200 && isHtml(page.headers))) {
        return page;
      }
      return new Response(null, {
        status: page.status,
        statusText: page.statusText,
        headers: agentHeaders(page.headers),
      });
    }

    // Rules 2, 4, 5: the card call starts now, in parallel with the origin fetch, under the
    // budget; the key stays here, in a header of a server-side call.
    const budget = budgetMs(env);
    const pageUrl = `https://${host}${url.pathname}`;
    const card = callCard(env, site, pageUrl, userAgent, budget);
    ctx.waitUntil(card); // the call completes (or times out) even when the page does not wait

    // Ask the origin for an uncompressed page: the rewriter can only read what it can decode.
    const originRequest = new Request(request);
    originRequest.headers.set("Accept-Encoding", "identity");
    const page = await fetch(originRequest);

    if (!(page.status === 200 && isHtml(page.headers))) {
      log("not_html", pageUrl);
      return page; // other answers to agents: as the origin sent them
    }

    const headers = agentHeaders(page.headers);
    const asciiOnly = !isUtf8(page.headers);

    // Rule 3: stream the page; at the first <article> (not in a comment, script or template),
    // wait for the card until the budget's deadline.
    let templates = 0;
    let placed = false;
    const rewriter = new HTMLRewriter()
      .on("template", {
        element(element) {
          templates += 1;
          try {
            element.onEndTag(() => {
              templates -= 1;
            });
          } catch {
            templates -= 1; // no end tag to wait for
          }
        },
      })
      .on("article", {
        async element(article) {
          if (placed || templates > 0) {
            return;
          }
          placed = true;
          const answer = await card;
          if (answer.cause) {
            log(answer.cause, pageUrl);
            return;
          }
          let html = answer.html;
          let brandLine = "";
          if (answer.brand !== null) {
            brandLine = `<p class="agentcard-brand-line">${escapeOnce(answer.brand)}</p>`;
          }
          if (asciiOnly) {
            html = characterReferences(html);
            brandLine = characterReferences(brandLine);
          }
          article.before(html, { html: true });
          if (brandLine) {
            article.prepend(brandLine, { html: true });
          }
          log("composed", pageUrl);
        },
      })
      .onDocument({
        end() {
          if (!placed) {
            log("no_article", pageUrl);
          }
        },
      });

    const response = new Response(page.body, {
      status: page.status,
      statusText: page.statusText,
      headers,
    });
    response.headers.delete("Content-Length"); // the rewritten length is not known in advance
    return rewriter.transform(response);
  },
};

// Rule 6 on every 200 text/html agent answer, composed or not.
function agentHeaders(pageHeaders) {
  const headers = new Headers(pageHeaders);
  headers.set("Cache-Control", AGENT_CACHE_CONTROL);
  headers.delete("ETag");
  headers.delete("Last-Modified");
  return headers;
}

// The card call: resolves to {html, brand} for a 200 text/html card, or to {cause}.
async function callCard(env, site, pageUrl, userAgent, budget) {
  const query = new URLSearchParams({
    partner_id: site.partner_id,
    fragment_id: site.fragment_id,
    lang: site.lang,
    page_url: pageUrl,
  });
  const base = String(env.AGENTCARD_SERVICE || "").replace(/\/+$/, "");
  const signal = AbortSignal.timeout(budget);
  try {
    const response = await fetch(`${base}/fragment?${query}`, {
      method: "GET",
      headers: {
        "User-Agent": CALL_USER_AGENT,
        "X-API-Key": env.AGENTCARD_KEY,
        "X-Agent-UA": userAgent,
        Accept: "text/html",
      },
      signal,
    });
    if (response.status === 204) {
      await discard(response);
      return { cause: "no_fill" };
    }
    if (response.status !== 200 || !isHtml(response.headers)) {
      await discard(response);
      return { cause: "card_error" };
    }
    const html = await response.text(); // the budget covers the body too
    return { html, brand: brandOf(html) };
  } catch (error) {
    return { cause: signal.aborted ? "timeout" : "unreachable" };
  }
}

async function discard(response) {
  try {
    await response.body?.cancel();
  } catch {
    // nothing to do
  }
}

function sites(env) {
  const configured = env.AGENTCARD_SITES;
  if (!configured) {
    return SITES;
  }
  const table = typeof configured === "string" ? JSON.parse(configured) : configured;
  const lowered = {};
  for (const [domain, site] of Object.entries(table)) {
    lowered[domain.toLowerCase()] = site;
  }
  return lowered;
}

function budgetMs(env) {
  const value = Number(env.AGENTCARD_BUDGET_MS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_BUDGET_MS;
}

function mediaType(headers) {
  return (headers.get("Content-Type") || "").split(";")[0].trim().toLowerCase();
}

function isHtml(headers) {
  return mediaType(headers) === "text/html";
}

// Whether the page declares UTF-8 in its Content-Type. Any other or no declaration: the
// card's and brand's non-ASCII characters are written as character references.
function isUtf8(headers) {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(headers.get("Content-Type") || "");
  return match !== null && /^utf-?8$/i.test(match[1]);
}

// The card's data-brand attribute (on its root element), decoded; null when absent.
function brandOf(html) {
  const root = /^\s*<[a-zA-Z][^\s/>]*([^>]*)>/.exec(html);
  if (!root) {
    return null;
  }
  const attribute = /(?:^|\s)data-brand\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/i.exec(
    root[1],
  );
  if (!attribute) {
    return null;
  }
  return decodeEntities(attribute[1] ?? attribute[2] ?? attribute[3]);
}

const NAMED = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

function decodeEntities(text) {
  return text.replace(/&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|([a-zA-Z]+));/g, (all, dec, hex, name) => {
    if (name !== undefined) {
      return Object.hasOwn(NAMED, name) ? NAMED[name] : all;
    }
    const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex, 16);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
      ? String.fromCodePoint(code)
      : "\ufffd";
  });
}

function escapeOnce(text) {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

// Non-ASCII characters as decimal character references (for pages not declared UTF-8).
function characterReferences(text) {
  return text.replace(/[^\x00-\x7f]/gu, (character) => `&#${character.codePointAt(0)};`);
}

function log(cause, pageUrl) {
  console.log(`agentcard ${cause} ${pageUrl}`);
}
