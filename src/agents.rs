//! Agent markers: which AI agent, for which purpose, is behind a User-Agent.
//!
//! The marker list is data with its version, kept in one file of the project
//! (`data/agent-markers-v0.1.txt`), compiled in with `include_str!` and parsed
//! once, at first use.
//!
//! Matching rules (agent markers v0.1):
//! - a marker matches case-insensitively (ASCII) anywhere in the User-Agent,
//!   but only on word boundaries: the byte before the match and the byte after
//!   it must each be absent (string edge) or not a word character, word
//!   characters being ASCII letters, digits and `_` (so `-`, `/`, space, `;`,
//!   `(` and any non-ASCII character are boundaries);
//! - when several markers match, the longest wins; on equal length, the one
//!   listed first in the data file.
//!
//! [`matching_marker`] does not allocate: each marker is looked
//! for with a sliding window compared byte by byte, ignoring ASCII case.

use std::sync::OnceLock;

/// The data file, shipped inside the binary.
const DATA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/data/agent-markers-v0.1.txt"
));

use crate::domain::Purpose;

/// The purpose of the agent a marker names; `Purpose::None` without a marker.
pub fn purpose_of(marker: Option<&Marker>) -> Purpose {
    marker.map_or(Purpose::None, |marker| marker.purpose)
}

/// The purpose named in a marker line of the data file. `none` is not one: every listed
/// marker is an AI agent.
fn purpose_in_data(name: &str) -> Option<Purpose> {
    Purpose::named(name).filter(|purpose| *purpose != Purpose::None)
}

/// One agent marker: the token looked for in a User-Agent, and its purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Marker {
    /// The marker as spelled in the data file, e.g. `GPTBot`.
    pub name: &'static str,
    pub purpose: Purpose,
}

/// The parsed data file.
#[derive(Debug)]
struct Table {
    version: &'static str,
    markers: Vec<Marker>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    // The data file is compiled in, so a malformed one is a programming error,
    // not a runtime condition: the tests below parse it and check its content.
    // This initialiser, run once at first use, is the only place where this
    // module may panic, with a message naming the file and the faulty line.
    TABLE.get_or_init(|| {
        parse(DATA).unwrap_or_else(|err| panic!("data/agent-markers-v0.1.txt is malformed: {err}"))
    })
}

/// The version of the marker list, e.g. `"v0.1"`.
pub fn version() -> &'static str {
    table().version
}

/// All markers, in data-file order.
pub fn markers() -> &'static [Marker] {
    &table().markers
}

/// The marker that matched, if any (longest match).
pub fn matching_marker(user_agent: &str) -> Option<&'static Marker> {
    longest_match(markers(), user_agent)
}

/// The longest of `markers` found on word boundaries in `user_agent`; on equal
/// length, the first in `markers`.
fn longest_match<'a>(markers: &'a [Marker], user_agent: &str) -> Option<&'a Marker> {
    let haystack = user_agent.as_bytes();
    let mut best: Option<&Marker> = None;
    for marker in markers {
        // Only a strictly longer marker can replace the current best.
        if best.is_some_and(|b| marker.name.len() <= b.name.len()) {
            continue;
        }
        if contains_word(haystack, marker.name.as_bytes()) {
            best = Some(marker);
        }
    }
    best
}

/// Whether `needle` occurs in `haystack`, ignoring ASCII case, with a word
/// boundary on each side. Every occurrence is tried, so `xGPTBot GPTBot`
/// contains the word `GPTBot`.
fn contains_word(haystack: &[u8], needle: &[u8]) -> bool {
    let len = needle.len();
    if len == 0 || haystack.len() < len {
        return false;
    }
    // Compare whole windows only where the first byte matches: most positions fail there.
    let first = needle[0].to_ascii_lowercase();
    haystack.windows(len).enumerate().any(|(start, window)| {
        window[0].to_ascii_lowercase() == first
            && window.eq_ignore_ascii_case(needle)
            && is_boundary(start.checked_sub(1).map(|before| haystack[before]))
            && is_boundary(haystack.get(start + len).copied())
    })
}

/// Whether the byte next to a match (`None` at the string's edge) leaves the
/// match a whole word. Bytes of non-ASCII characters are never word bytes.
fn is_boundary(byte: Option<u8>) -> bool {
    !matches!(byte, Some(b) if is_word_byte(b))
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Parses the data file format:
/// - blank lines and lines starting with `#` are skipped;
/// - one `version: <version>` line, before any marker;
/// - one `<purpose><TAB or spaces><Marker>` line per marker; the marker is
///   printable ASCII without spaces, begins and ends with a word character,
///   and appears once (ignoring case).
fn parse(text: &'static str) -> Result<Table, String> {
    let mut version: Option<&'static str> = None;
    let mut markers: Vec<Marker> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("version:") {
            let value = rest.trim();
            if value.is_empty() || value.contains(char::is_whitespace) {
                return Err(format!("line {line_no}: bad version line `{line}`"));
            }
            if version.is_some() {
                return Err(format!("line {line_no}: second version line"));
            }
            version = Some(value);
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(purpose), Some(name), None) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(format!(
                "line {line_no}: expected `purpose<TAB>Marker`, found `{line}`"
            ));
        };
        if version.is_none() {
            return Err(format!("line {line_no}: marker before the `version:` line"));
        }
        let purpose = purpose_in_data(purpose).ok_or_else(|| {
            format!(
                "line {line_no}: unknown purpose `{purpose}` (expected training, query, search or unknown)"
            )
        })?;
        if !is_valid_marker_name(name) {
            return Err(format!("line {line_no}: bad marker `{name}`"));
        }
        if markers.iter().any(|m| m.name.eq_ignore_ascii_case(name)) {
            return Err(format!("line {line_no}: duplicate marker `{name}`"));
        }
        markers.push(Marker { name, purpose });
    }
    let version = version.ok_or("no `version:` line")?;
    if markers.is_empty() {
        return Err("no markers".to_owned());
    }
    Ok(Table { version, markers })
}

/// A marker must start and end with a word character, or the word-boundary
/// rule would not mean what it says.
fn is_valid_marker_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => {
            is_word_byte(first) && is_word_byte(last) && bytes.iter().all(u8::is_ascii_graphic)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The purpose of the agent behind a User-Agent string, `Purpose::None` when no marker
    /// matches.
    fn classify(user_agent: &str) -> Purpose {
        purpose_of(matching_marker(user_agent))
    }

    /// The contract's list, in data-file order.
    const CONTRACT: &[(&str, Purpose)] = &[
        ("GPTBot", Purpose::Training),
        ("ClaudeBot", Purpose::Training),
        ("CCBot", Purpose::Training),
        ("Bytespider", Purpose::Training),
        ("Meta-ExternalAgent", Purpose::Training),
        ("AI2Bot", Purpose::Training),
        ("ChatGPT-User", Purpose::Query),
        ("Claude-User", Purpose::Query),
        ("Perplexity-User", Purpose::Query),
        ("MistralAI-User", Purpose::Query),
        ("Meta-ExternalFetcher", Purpose::Query),
        ("OAI-SearchBot", Purpose::Search),
        ("Claude-SearchBot", Purpose::Search),
        ("PerplexityBot", Purpose::Search),
        ("YouBot", Purpose::Search),
        ("DuckAssistBot", Purpose::Search),
        ("Amazonbot", Purpose::Unknown),
    ];

    /// (expected marker, full User-Agent as published by the vendor, purpose)
    const AGENTS: &[(&str, &str, Purpose)] = &[
        (
            "GPTBot",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)",
            Purpose::Training,
        ),
        (
            "ClaudeBot",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
            Purpose::Training,
        ),
        (
            "CCBot",
            "CCBot/2.0 (https://commoncrawl.org/faq/)",
            Purpose::Training,
        ),
        (
            "Bytespider",
            "Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com)",
            Purpose::Training,
        ),
        (
            "Meta-ExternalAgent",
            "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
            Purpose::Training,
        ),
        (
            "AI2Bot",
            "Mozilla/5.0 (compatible) AI2Bot (+https://www.allenai.org/crawler)",
            Purpose::Training,
        ),
        (
            "ChatGPT-User",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot",
            Purpose::Query,
        ),
        (
            "Claude-User",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)",
            Purpose::Query,
        ),
        (
            "Perplexity-User",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)",
            Purpose::Query,
        ),
        (
            "MistralAI-User",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; MistralAI-User/1.0; +https://docs.mistral.ai/robots)",
            Purpose::Query,
        ),
        (
            "Meta-ExternalFetcher",
            "meta-externalfetcher/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
            Purpose::Query,
        ),
        (
            "OAI-SearchBot",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot",
            Purpose::Search,
        ),
        (
            "Claude-SearchBot",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-SearchBot/1.0; +Claude-SearchBot@anthropic.com)",
            Purpose::Search,
        ),
        (
            "PerplexityBot",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
            Purpose::Search,
        ),
        (
            "YouBot",
            "Mozilla/5.0 (compatible; YouBot (+http://www.you.com))",
            Purpose::Search,
        ),
        (
            "DuckAssistBot",
            "DuckAssistBot/1.1; (+http://duckduckgo.com/duckassistbot.html)",
            Purpose::Search,
        ),
        (
            "Amazonbot",
            "Mozilla/5.0 (compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36",
            Purpose::Unknown,
        ),
    ];

    const BROWSERS: &[&str] = &[
        // Chrome, Windows / macOS / Android
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
        // Firefox, Windows / Linux
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
        "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
        // Safari, macOS / iOS
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
        // Chrome on iOS
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
        // Edge
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
    ];

    const OTHER_CRAWLERS_AND_TOOLS: &[&str] = &[
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.139 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
        "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)",
        "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
        "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)",
        "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
        "Twitterbot/1.0",
        "curl/8.5.0",
        "python-requests/2.32.3",
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    ];

    /// Leaks a test string so it can be parsed like the `'static` data file.
    fn leak(text: &str) -> &'static str {
        Box::leak(text.to_owned().into_boxed_str())
    }

    #[test]
    fn data_file_is_v0_1_with_17_markers_6_5_5_1() {
        assert_eq!(version(), "v0.1");
        assert_eq!(markers().len(), 17);
        let count = |purpose| markers().iter().filter(|m| m.purpose == purpose).count();
        assert_eq!(count(Purpose::Training), 6);
        assert_eq!(count(Purpose::Query), 5);
        assert_eq!(count(Purpose::Search), 5);
        assert_eq!(count(Purpose::Unknown), 1);
        assert_eq!(count(Purpose::None), 0);
        let listed: Vec<(&str, Purpose)> = markers().iter().map(|m| (m.name, m.purpose)).collect();
        assert_eq!(listed, CONTRACT);
    }

    #[test]
    fn purpose_names_and_places() {
        let cases = [
            (Purpose::Training, "training"),
            (Purpose::Query, "query"),
            (Purpose::Search, "search"),
            (Purpose::Unknown, "unknown"),
            (Purpose::None, "none"),
        ];
        assert_eq!(Purpose::ALL.len(), cases.len());
        for (i, (purpose, name)) in cases.into_iter().enumerate() {
            assert_eq!(purpose.as_str(), name);
            assert_eq!((purpose.index(), Purpose::ALL[i]), (i, purpose));
        }
    }

    #[test]
    fn published_agent_user_agents_give_their_purpose() {
        assert_eq!(AGENTS.len(), 17);
        for &(name, ua, purpose) in AGENTS {
            assert_eq!(classify(ua), purpose, "{ua}");
            assert_eq!(matching_marker(ua).map(|m| m.name), Some(name), "{ua}");
        }
        // Every marker of the data file has a published User-Agent above.
        for marker in markers() {
            assert!(
                AGENTS.iter().any(|&(name, ..)| name == marker.name),
                "{}",
                marker.name
            );
        }
    }

    #[test]
    fn matching_ignores_ascii_case() {
        for &(name, ua, purpose) in AGENTS {
            for variant in [ua.to_ascii_lowercase(), ua.to_ascii_uppercase()] {
                assert_eq!(classify(&variant), purpose, "{variant}");
                assert_eq!(
                    matching_marker(&variant).map(|m| m.name),
                    Some(name),
                    "{variant}"
                );
            }
        }
    }

    #[test]
    fn browsers_are_not_agents() {
        for &ua in BROWSERS {
            for variant in [
                ua.to_owned(),
                ua.to_ascii_lowercase(),
                ua.to_ascii_uppercase(),
            ] {
                assert_eq!(classify(&variant), Purpose::None, "{variant}");
                assert_eq!(matching_marker(&variant), None, "{variant}");
            }
        }
    }

    #[test]
    fn other_crawlers_and_tools_are_not_agents() {
        for &ua in OTHER_CRAWLERS_AND_TOOLS {
            for variant in [
                ua.to_owned(),
                ua.to_ascii_lowercase(),
                ua.to_ascii_uppercase(),
            ] {
                assert_eq!(classify(&variant), Purpose::None, "{variant}");
            }
        }
    }

    #[test]
    fn word_boundaries() {
        let cases: &[(&str, Purpose)] = &[
            ("", Purpose::None),
            ("xGPTBot", Purpose::None),
            ("GPTBotx", Purpose::None),
            ("GPTBot_1", Purpose::None),
            ("_GPTBot", Purpose::None),
            ("1GPTBot", Purpose::None),
            ("GPTBot2", Purpose::None),
            ("GPTBo", Purpose::None),
            ("GPT Bot", Purpose::None),
            ("ChatGPT", Purpose::None),
            ("ChatGPT-Userx", Purpose::None),
            ("Meta-ExternalAgents/1.0", Purpose::None),
            ("Claude", Purpose::None),
            ("(GPTBot/1.0)", Purpose::Training),
            ("GPTBot", Purpose::Training),
            ("gptbot", Purpose::Training),
            (" GPTBot ", Purpose::Training),
            ("compatible;GPTBot;", Purpose::Training),
            ("foo-GPTBot-bar", Purpose::Training),
            ("xGPTBot GPTBot/1.0", Purpose::Training),
            ("éGPTBot☃", Purpose::Training),
            ("Claude-SearchBot", Purpose::Search),
            ("Claude-SearchBot/1.0", Purpose::Search),
            ("Claude-User/1.0", Purpose::Query),
            ("ClaudeBot/1.0", Purpose::Training),
            ("PerplexityBot/1.0", Purpose::Search),
            ("Perplexity-User/1.0", Purpose::Query),
            ("ChatGPT-User/1.0", Purpose::Query),
        ];
        for &(ua, purpose) in cases {
            assert_eq!(classify(ua), purpose, "{ua:?}");
        }
        assert_eq!(
            matching_marker("Claude-SearchBot/1.0").map(|m| m.name),
            Some("Claude-SearchBot")
        );
    }

    #[test]
    fn every_marker_matches_alone_and_in_context() {
        for marker in markers() {
            let name = marker.name;
            for ua in [
                name.to_owned(),
                format!("{name}/1.0"),
                format!("Mozilla/5.0 (compatible; {name}/1.0; +https://example.com/bot)"),
            ] {
                assert_eq!(matching_marker(&ua), Some(marker), "{ua}");
            }
            for ua in [format!("x{name}"), format!("{name}x"), format!("{name}_1")] {
                assert_eq!(matching_marker(&ua), None, "{ua}");
            }
        }
    }

    #[test]
    fn longest_match_wins() {
        let cases: &[(&str, &str)] = &[
            ("ClaudeBot/1.0 Claude-SearchBot/1.0", "Claude-SearchBot"),
            ("Claude-SearchBot/1.0 ClaudeBot/1.0", "Claude-SearchBot"),
            ("GPTBot/1.1 ChatGPT-User/1.0", "ChatGPT-User"),
            (
                "Amazonbot/0.1 Meta-ExternalFetcher/1.1",
                "Meta-ExternalFetcher",
            ),
            ("CCBot/2.0; Bytespider", "Bytespider"),
            ("PerplexityBot/1.0 Perplexity-User/1.0", "Perplexity-User"),
            // Equal lengths: the first in the data file.
            ("YouBot/1.0 GPTBot/1.1", "GPTBot"),
            ("YouBot AI2Bot", "AI2Bot"),
            ("Amazonbot/0.1 ClaudeBot/1.0", "ClaudeBot"),
        ];
        for &(ua, name) in cases {
            assert_eq!(matching_marker(ua).map(|m| m.name), Some(name), "{ua}");
        }
    }

    #[test]
    fn ties_go_to_the_first_in_the_file() {
        let ua = "Bravo/1 Alpha/1";
        let first_alpha = parse(leak("version: t\nquery Alpha\nsearch Bravo\n")).unwrap();
        let first_bravo = parse(leak("version: t\nsearch Bravo\nquery Alpha\n")).unwrap();
        assert_eq!(
            longest_match(&first_alpha.markers, ua).map(|m| m.name),
            Some("Alpha")
        );
        assert_eq!(
            longest_match(&first_bravo.markers, ua).map(|m| m.name),
            Some("Bravo")
        );
    }

    #[test]
    fn parse_accepts_tabs_spaces_comments_and_blank_lines() {
        let table = parse(leak(
            "# comment\n\n  version:   v9  \ntraining\tA-Bot\n  # indented comment\nquery    B_Bot\r\nunknown \t C\n",
        ))
        .unwrap();
        assert_eq!(table.version, "v9");
        let listed: Vec<(&str, Purpose)> =
            table.markers.iter().map(|m| (m.name, m.purpose)).collect();
        assert_eq!(
            listed,
            [
                ("A-Bot", Purpose::Training),
                ("B_Bot", Purpose::Query),
                ("C", Purpose::Unknown)
            ]
        );
    }

    #[test]
    fn parse_rejects_malformed_data() {
        let cases: &[(&str, &str)] = &[
            ("", "no `version:` line"),
            ("# only comments\n", "no `version:` line"),
            (
                "training GPTBot\n",
                "line 1: marker before the `version:` line",
            ),
            ("version: v1\n", "no markers"),
            ("version:\ntraining GPTBot\n", "line 1: bad version line"),
            (
                "version: v 1\ntraining GPTBot\n",
                "line 1: bad version line",
            ),
            ("version: v1\nversion: v2\n", "line 2: second version line"),
            (
                "version: v1\ntraining\n",
                "line 2: expected `purpose<TAB>Marker`",
            ),
            (
                "version: v1\ntraining GPT Bot\n",
                "line 2: expected `purpose<TAB>Marker`",
            ),
            (
                "version: v1\nnone GPTBot\n",
                "line 2: unknown purpose `none`",
            ),
            (
                "version: v1\nTraining GPTBot\n",
                "line 2: unknown purpose `Training`",
            ),
            (
                "version: v1\ntraining -GPTBot\n",
                "line 2: bad marker `-GPTBot`",
            ),
            (
                "version: v1\ntraining GPTBot/\n",
                "line 2: bad marker `GPTBot/`",
            ),
            (
                "version: v1\ntraining GPTBöt\n",
                "line 2: bad marker `GPTBöt`",
            ),
            (
                "version: v1\ntraining GPTBot\nsearch gptbot\n",
                "line 3: duplicate marker `gptbot`",
            ),
        ];
        for &(text, expected) in cases {
            let err = parse(leak(text)).expect_err(text);
            assert!(err.starts_with(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn contains_word_edges() {
        assert!(!contains_word(b"", b"a"));
        assert!(!contains_word(b"abc", b""));
        assert!(!contains_word(b"ab", b"abc"));
        assert!(contains_word(b"abc", b"ABC"));
        assert!(contains_word(b"x abc", b"abc"));
        assert!(!contains_word(b"xabc abcx", b"abc"));
        assert!(contains_word(b"xabc abcx abc", b"abc"));
    }
}
