vcl 4.1;
#
# agentcard for Varnish 7.1: a card from the agentcard service, composed into
# the page by ESI, for AI agents only.
#
# Copy this file, edit section 1 (origin, service, key file, sites, budget)
# and merge sections 2-3 into your VCL if you already have one (every
# subroutine below only adds to what Varnish's built-in VCL does, and returns
# only for AI agents and for the card's sub-request). Run varnishd with
# -p http_gzip_support=off -p feature=+esi_disable_xml_check. See README.md.
#
# Your page template carries, immediately before its first <article> start
# tag, the ESI include in its comment form (a browser or an HTML parser sees a
# comment; Varnish, for agents only, replaces it with the card), with no space
# after "<!--esi" (Varnish would keep that space in the page):
#
#     <!--esi<esi:include src="/agentcard-card"/>-->
#
# Log lines (std.log, tag VCL_Log, prefix "agentcard:"), one per card call or
# page not composed: "card" when the service answered a card, else the
# fail-open cause: no_fill, card_error, timeout, unreachable, not_html. One
# line each, with the URL (the card call's carries page_url):
#     varnishncsa -b -q 'VCL_Log ~ "^agentcard:"' -F '%{VCL_Log:agentcard}x %U%q'

import std;

# ---------------------------------------------------------------------------
# 1. Configuration
# ---------------------------------------------------------------------------

# Your origin (as in your existing VCL).
backend default {
    .host = "127.0.0.1";
    .port = "8080";
}

# The agentcard service, reached over plain HTTP on your network (Varnish
# does not speak TLS to backends: put a TLS tunnel such as stunnel or haproxy
# on loopback in front of an https service).
backend agentcard {
    .host = "127.0.0.1";
    .port = "8000";
}

# The card call: its Host header (the service's host name) and its budget
# (rule 5: about 800 ms on the same network), as the connect, first-byte and
# between-bytes time-outs of the call.
sub agentcard_call {
    set bereq.http.Host = "{{service_host}}";
    set bereq.connect_timeout = 800ms;
    set bereq.first_byte_timeout = 800ms;
    set bereq.between_bytes_timeout = 800ms;
}

# The delivery key (svc_live_...) lives in a file only Varnish reads, never in
# this VCL or anything a client receives (rule 2):
#     install -m 0640 -o root -g vcache /dev/stdin /etc/varnish/agentcard.key
# It is read once per VCL load: `varnishreload` after changing it.
sub agentcard_key {
    set bereq.http.X-API-Key = regsub(std.fileread("/etc/varnish/agentcard.key"), "\s+$", "");
}

# Your sites: host (lowercased, port dropped) -> partner_id, fragment_id and
# lang of the fragment endpoint. Hosts not listed are never composed.
# Optional targeting: append "&ctx.<key>=<value>" (URL-encoded) from the
# page's path (query string stripped), e.g.
#     if (req.http.X-Agentcard-Path ~ "^/sport/") {
#         set req.http.X-Agentcard-Site = req.http.X-Agentcard-Site + "&ctx.section=sport";
#     }
sub agentcard_site {
    if (req.http.X-Agentcard-Host == "{{domain}}") {
        set req.http.X-Agentcard-Site = "partner_id={{partner_id}}&fragment_id={{fragment_id}}&lang={{lang}}";
    }
}

# ---------------------------------------------------------------------------
# 2. The gate (rule 1): agent markers v0.1 (data/agent-markers-v0.1.txt), the
#    17 markers matched case-insensitively (ASCII) on word boundaries, word
#    characters being ASCII letters, digits and "_" (any other byte, non-ASCII
#    ones included, is a boundary). Written without (?i) so that only ASCII
#    case folds, exactly as the service's classifier does.
# ---------------------------------------------------------------------------

sub agentcard_gate {
    # A HEAD gets the headers its GET would (rule 6): it has no body, so no include and no call.
    if ((req.method == "GET" || req.method == "HEAD")
        && req.http.X-Agentcard-Site
        && req.http.User-Agent ~ "(?<![A-Za-z0-9_])([Gg][Pp][Tt][Bb][Oo][Tt]|[Cc][Ll][Aa][Uu][Dd][Ee][Bb][Oo][Tt]|[Cc][Cc][Bb][Oo][Tt]|[Bb][Yy][Tt][Ee][Ss][Pp][Ii][Dd][Ee][Rr]|[Mm][Ee][Tt][Aa]-[Ee][Xx][Tt][Ee][Rr][Nn][Aa][Ll][Aa][Gg][Ee][Nn][Tt]|[Aa][Ii]2[Bb][Oo][Tt]|[Cc][Hh][Aa][Tt][Gg][Pp][Tt]-[Uu][Ss][Ee][Rr]|[Cc][Ll][Aa][Uu][Dd][Ee]-[Uu][Ss][Ee][Rr]|[Pp][Ee][Rr][Pp][Ll][Ee][Xx][Ii][Tt][Yy]-[Uu][Ss][Ee][Rr]|[Mm][Ii][Ss][Tt][Rr][Aa][Ll][Aa][Ii]-[Uu][Ss][Ee][Rr]|[Mm][Ee][Tt][Aa]-[Ee][Xx][Tt][Ee][Rr][Nn][Aa][Ll][Ff][Ee][Tt][Cc][Hh][Ee][Rr]|[Oo][Aa][Ii]-[Ss][Ee][Aa][Rr][Cc][Hh][Bb][Oo][Tt]|[Cc][Ll][Aa][Uu][Dd][Ee]-[Ss][Ee][Aa][Rr][Cc][Hh][Bb][Oo][Tt]|[Pp][Ee][Rr][Pp][Ll][Ee][Xx][Ii][Tt][Yy][Bb][Oo][Tt]|[Yy][Oo][Uu][Bb][Oo][Tt]|[Dd][Uu][Cc][Kk][Aa][Ss][Ss][Ii][Ss][Tt][Bb][Oo][Tt]|[Aa][Mm][Aa][Zz][Oo][Nn][Bb][Oo][Tt])(?![A-Za-z0-9_])") {
        set req.http.X-Agentcard-Agent = "1";
    }
}

# ---------------------------------------------------------------------------
# 3. The subroutines. Varnish appends its built-in VCL to each of them, so a
#    human request runs exactly what it ran before.
# ---------------------------------------------------------------------------

sub vcl_recv {
    if (req.esi_level == 0) {
        # Internal headers are never taken from a client.
        unset req.http.X-Agentcard-Agent;
        unset req.http.X-Agentcard-Site;
        unset req.http.X-Agentcard-Host;
        unset req.http.X-Agentcard-Path;
        set req.http.X-Agentcard-Host = regsub(std.tolower(req.http.Host), ":[0-9]*$", "");
        set req.http.X-Agentcard-Path = regsub(req.url, "[?#].*$", "");
        call agentcard_site;
        call agentcard_gate;
        unset req.http.X-Agentcard-Host;
        unset req.http.X-Agentcard-Path;
        unset req.http.X-Agentcard-Site;
        if (req.http.X-Agentcard-Agent) {
            # The agent's render is never cached nor served from cache: humans
            # keep their cache, agents always go to the origin (the header
            # tells the backend side; the origin may use it too, e.g. to
            # write the ESI comment only for agents).
            return (pass);
        }
    } elsif (req.url == "/agentcard-card") {
        call agentcard_card_request;
    }
}

# The card's ESI sub-request: /agentcard-card becomes the service's
# GET /fragment (rules 2, 4). Only under a gated agent's page.
sub agentcard_card_request {
    if (!req_top.http.X-Agentcard-Agent) {
        return (synth(204));
    }
    set req.http.X-Agentcard-Host = regsub(std.tolower(req_top.http.Host), ":[0-9]*$", "");
    set req.http.X-Agentcard-Path = regsub(req_top.url, "[?#].*$", "");
    call agentcard_site;
    if (!req.http.X-Agentcard-Site) {
        return (synth(204));
    }
    # page_url: https + host + path of the page's request, query and fragment
    # stripped (rule 4), percent-encoded for a query string.
    set req.url = "/fragment?" + req.http.X-Agentcard-Site + "&page_url=https%3A%2F%2F"
        + req.http.X-Agentcard-Host
        + regsuball(regsuball(regsuball(regsuball(regsuball(
            req.http.X-Agentcard-Path,
            "%", "%25"), "&", "%26"), "\+", "%2B"), "=", "%3D"), "/", "%2F");
    unset req.http.X-Agentcard-Host;
    unset req.http.X-Agentcard-Path;
    unset req.http.X-Agentcard-Site;
    # The sub-request starts as a copy of the agent's request headers as they
    # arrived: keep none of its credentials (add any other header your site
    # uses for them), and a benign User-Agent (edge protection in front of the
    # service may block AI agents' User-Agents).
    unset req.http.X-Agentcard-Agent;
    unset req.http.X-API-Key;
    unset req.http.Cookie;
    unset req.http.Authorization;
    unset req.http.Proxy-Authorization;
    unset req.http.Accept-Encoding;
    unset req.http.Range;
    unset req.http.If-None-Match;
    unset req.http.If-Modified-Since;
    set req.http.X-Agent-UA = req_top.http.User-Agent;
    set req.http.User-Agent = "agentcard-varnish/1";
    set req.backend_hint = agentcard;
    # One call per agent page: the service counts it.
    return (pass);
}

sub vcl_backend_fetch {
    if (bereq.backend == agentcard) {
        call agentcard_call;
        call agentcard_key;
    } elsif (bereq.http.X-Agentcard-Agent) {
        # gzip or identity only: Varnish runs ESI on both (it unzips and
        # rezips a gzip page), not on br or zstd.
        if (bereq.http.Accept-Encoding ~ "(?i)(^|,)\s*gzip\s*(;|,|$)"
            && bereq.http.Accept-Encoding !~ "(?i)(^|,)\s*gzip\s*;\s*q\s*=\s*0(\.0*)?\s*(,|$)") {
            set bereq.http.Accept-Encoding = "gzip";
        } else {
            unset bereq.http.Accept-Encoding;
        }
    }
}

sub vcl_backend_response {
    if (bereq.backend == agentcard) {
        if (beresp.status == 204) {
            std.log("agentcard: no_fill");
            return (error(204));
        }
        if (beresp.status != 200 || beresp.http.Content-Type !~ "(?i)^\s*text/html\s*(;|$)") {
            # An error body (or JSON) would otherwise be pasted into the page.
            std.log("agentcard: card_error " + beresp.status + " " + beresp.http.Content-Type);
            return (error(204));
        }
        # The card arrives whole before it is included, so that a card
        # broken off half-way is dropped rather than pasted in part.
        set beresp.do_stream = false;
        set beresp.uncacheable = true;
        std.log("agentcard: card");
        return (deliver);
    }
    if (bereq.http.X-Agentcard-Agent) {
        # Compose only 200 text/html in UTF-8 (rule 6), gzip or identity.
        if (beresp.status == 200
            && beresp.http.Content-Type ~ "(?i)^\s*text/html\s*;(.*;)?\s*charset\s*=\s*\x22?utf-?8\x22?\s*(;|$)"
            && (!beresp.http.Content-Encoding || beresp.http.Content-Encoding ~ "(?i)^\s*(gzip|identity)\s*$")) {
            set beresp.do_esi = true;
        } else {
            std.log("agentcard: not_html " + beresp.status + " " + beresp.http.Content-Type
                + " " + beresp.http.Content-Encoding);
        }
    }
    if (!beresp.do_esi && beresp.filters ~ "^\s*testgunzip\s*$"
        && beresp.http.Vary !~ "(?i)(^|,)\s*Accept-Encoding\s*(,|$)") {
        # A page not composed goes out as the origin sent it. Varnish checks
        # a gzip body on its way in and, doing so, adds "Vary: Accept-Encoding"
        # when the origin did not send it: not on this answer.
        set beresp.filters = "";
    }
}

sub vcl_backend_error {
    if (bereq.backend == agentcard) {
        # Time-out, connection refused or closed: an empty include (Varnish
        # would otherwise paste its "Backend fetch failed" page). A time-out
        # is the failure that came with the budget spent (Varnish's timer may
        # fire a little early: 90% of it); a refused or closed connection
        # fails at once.
        if (beresp.status != 204) {
            if (now - bereq.time >= bereq.first_byte_timeout * 0.9) {
                std.log("agentcard: timeout " + (now - bereq.time));
            } else {
                std.log("agentcard: unreachable " + (now - bereq.time));
            }
        }
        set beresp.status = 204;
        set beresp.body = "";
        unset beresp.http.Content-Type;
        unset beresp.http.Retry-After;
        return (deliver);
    }
}

sub vcl_deliver {
    if (req.esi_level > 0 && req.url ~ "^/fragment\?" && resp.status != 200) {
        return (synth(204));
    }
    if (req.esi_level == 0 && req.http.X-Agentcard-Agent
        && resp.status == 200 && resp.http.Content-Type ~ "(?i)^\s*text/html\s*(;|$)") {
        # Rule 6, on every 200 text/html answer to an agent, composed or not.
        set resp.http.Cache-Control = "public, max-age=0, must-revalidate";
        unset resp.http.ETag;
        unset resp.http.Last-Modified;
    }
}

sub vcl_synth {
    if (req.esi_level > 0 && (req.url == "/agentcard-card" || req.url ~ "^/fragment\?")) {
        # Nothing to include.
        set resp.status = 204;
        set resp.body = "";
        unset resp.http.Content-Type;
        unset resp.http.Retry-After;
        return (deliver);
    }
}
