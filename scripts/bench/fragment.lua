-- scripts/bench/fragment.lua: wrk script of the load benchmark (scripts/bench-load.sh), for
-- every target (the references ignore the query and answer the card). Rotates GET /fragment over BENCH_PAGES (default 1000) distinct page URLs of the
-- bench organisation's sites (site1.example … site1000.example in scripts/bench-data.sql),
-- so every request resolves a page and selects a card:
--   /news/{k}/article for 3 pages in 4: k odd and <= 20 hits the prefix rule /news/{k}/,
--     k even (an exact rule that does not match) or > 20 (no rule) falls to the site default;
--   /news/{k}/ for 1 page in 4: the exact rule for k even, the prefix rule for k odd;
--   half of the pages send ctx.section=news, and X-Agent-UA rotates over a few agents.
-- Requests are built once per wrk thread; each thread starts at its own offset.
--
-- Environment: BENCH_PARTNER_ID, BENCH_FRAGMENT_ID, BENCH_API_KEY (required), BENCH_PAGES.

local function required(name)
  local value = os.getenv(name)
  if value == nil or value == "" then
    error(name .. " is not set")
  end
  return value
end

local function url_encode(text)
  return (text:gsub("[^%w%-%._~]", function(c)
    return string.format("%%%02X", string.byte(c))
  end))
end

local partner_id = required("BENCH_PARTNER_ID")
local fragment_id = required("BENCH_FRAGMENT_ID")
local api_key = required("BENCH_API_KEY")
local page_count = tonumber(os.getenv("BENCH_PAGES") or "1000")

local agents = {
  "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)",
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0)",
  "Mozilla/5.0 (compatible; PerplexityBot/1.0)",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36",
}

local function page_path(i)
  local k = 1 + (i * 7) % 24
  if i % 4 == 3 then
    return "/news/" .. k .. "/"
  end
  return "/news/" .. k .. "/article"
end

local function fragment_request(i)
  local page_url = "https://site" .. (1 + i % 1000) .. ".example" .. page_path(i)
  local path = "/fragment?partner_id=" .. url_encode(partner_id)
    .. "&fragment_id=" .. url_encode(fragment_id)
    .. "&lang=fr"
    .. "&api_key=" .. url_encode(api_key)
    .. "&page_url=" .. url_encode(page_url)
  if i % 2 == 0 then
    path = path .. "&ctx.section=news"
  end
  return wrk.format("GET", path, { ["X-Agent-UA"] = agents[1 + i % #agents] })
end

-- Main Lua state: give each thread its own starting offset.
local threads_started = 0

function setup(thread)
  thread:set("offset", threads_started * 337)
  threads_started = threads_started + 1
end

-- Thread Lua states.
local requests = {}
local next_index = 0

function init(args)
  for i = 0, page_count - 1 do
    requests[i] = fragment_request(i)
  end
  next_index = (offset or 0) % page_count
end

function request()
  local raw = requests[next_index]
  next_index = (next_index + 1) % page_count
  return raw
end
