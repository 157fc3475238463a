//! The page a `/fragment` request names in `page_url`, as resolution sees it: the lowercase
//! host without port, and the canonical path (`crate::domain::path`, the same rule as the
//! management API's route paths).
//!
//! `page_url` is read as a browser would (WHATWG URL parsing by the `url` crate: dot segments
//! resolved, IDNA hosts, IPv4 forms, backslashes, tabs and newlines). That parser is a large
//! share of a decision's time, yet nearly every edge sends a plain `https://host/path`, which it
//! leaves unchanged. So a URL of that plain shape is split here directly, and every other URL
//! goes to the parser; a test compares the two on tens of thousands of generated URLs.

use crate::domain::path::{canonical_page_path, literal_bytes};

#[derive(Debug, PartialEq, Eq)]
pub struct Page {
    pub host: String,
    /// `None` when the path is refused by the canonical steps: no rule matches it.
    pub path: Option<String>,
}

impl Page {
    /// An `http`/`https` URL; `None` for anything else.
    pub fn parse(page_url: &str) -> Option<Page> {
        match plain_parts(page_url) {
            Some((host, path)) => Some(Page::new(host, path)),
            None => Page::parse_whatwg(page_url),
        }
    }

    /// [`Page::parse`] by the WHATWG parser alone, never the plain split: the tests and
    /// `crate::fuzzing` compare the two.
    pub(crate) fn parse_whatwg(page_url: &str) -> Option<Page> {
        let url = url::Url::parse(page_url).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        Some(Page::new(url.host_str()?, url.path()))
    }

    fn new(host: &str, path: &str) -> Page {
        Page {
            host: host.to_ascii_lowercase(),
            path: canonical_page_path(path),
        }
    }
}

/// Host and path of a URL that WHATWG parsing leaves as written (but for the host's case),
/// or `None` when the parser has something to do: another scheme or spelling of it, a port,
/// user info, an IP address, an IDNA label, a character it would encode or drop, a dot
/// segment. An empty path is `/`, as the parser makes it.
fn plain_parts(url: &str) -> Option<(&str, &str)> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    // Byte searches: a `char` set pattern decodes UTF-8 as it goes. The bytes sought are
    // ASCII, so every index found is a char boundary.
    let host_end = position(rest, |b| matches!(b, b'/' | b'?' | b'#'));
    let (host, tail) = rest.split_at(host_end);
    let path = &tail[..position(tail, |b| matches!(b, b'?' | b'#'))];
    if !is_plain_host(host) || !is_plain_path(path) {
        return None;
    }
    Some((host, if path.is_empty() { "/" } else { path }))
}

/// The index of the first byte of `text` that `found` accepts, else its length.
fn position(text: &str, found: impl Fn(u8) -> bool) -> usize {
    text.bytes().position(found).unwrap_or(text.len())
}

/// Dot-separated labels of ASCII letters, digits and `-`, none empty, none an IDNA `xn--`
/// label, the last starting with a letter (so never an IPv4 address in any of its forms).
/// Byte loops here and in `is_plain_path`: splitting into labels and segments with `str`
/// patterns was a sixth of the decision's time.
fn is_plain_host(host: &str) -> bool {
    let bytes = host.as_bytes();
    let mut label_start = 0;
    for at in 0..=bytes.len() {
        let end = at == bytes.len();
        if end || bytes[at] == b'.' {
            // Every byte of the label passed the check below: it is ASCII, a `str`.
            let label = &host[label_start..at];
            let idna = starts_with_ignore_ascii_case(label, "xn--");
            match label.as_bytes().first() {
                None => return false,
                Some(first) if idna || (end && !first.is_ascii_alphabetic()) => return false,
                Some(_) => label_start = at + 1,
            }
        } else if !(bytes[at].is_ascii_alphanumeric() || bytes[at] == b'-') {
            return false;
        }
    }
    true
}

/// Bytes the URL parser copies into a path as they are: a segment's literal characters (the
/// canonical-path rule's own set), `/` and `%`. A `static`, not a `const`: a `const` table is
/// a value, copied onto the stack wherever it is used.
static COPIED_AS_IS: [bool; 256] = literal_bytes(true, b"/%");

/// Empty, or `/` followed by characters the parser copies as they are, with no segment that
/// could be a dot segment (`.`, `..`, `%2e`, …; a segment merely starting like one is left to
/// the parser too).
fn is_plain_path(path: &str) -> bool {
    let Some(body) = path.strip_prefix('/') else {
        return path.is_empty();
    };
    let mut segment_start = true;
    for (at, b) in body.bytes().enumerate() {
        let dot_like =
            b == b'.' || (b == b'%' && starts_with_ignore_ascii_case(&body[at..], "%2e"));
        if !COPIED_AS_IS[usize::from(b)] || (segment_start && dot_like) {
            return false;
        }
        segment_start = b == b'/';
    }
    true
}

/// `text` starts with `prefix`, ASCII case aside. Never slices inside a character: `text` is
/// still unchecked input here.
fn starts_with_ignore_ascii_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(host: &str, path: Option<&str>) -> Option<Page> {
        Some(Page {
            host: host.to_string(),
            path: path.map(str::to_string),
        })
    }

    #[test]
    fn pages_as_a_browser_reads_them() {
        let cases = [
            (
                "https://Example.com/News/Today",
                page("example.com", Some("/news/today/")),
            ),
            ("http://a.example", page("a.example", Some("/"))),
            ("https://a.example?x=1#top", page("a.example", Some("/"))),
            (
                "https://a.example/x/?q=/y#/z",
                page("a.example", Some("/x/")),
            ),
            ("https://a.example:8443/x", page("a.example", Some("/x/"))),
            (
                "https://a.example/a/b/../c",
                page("a.example", Some("/a/c/")),
            ),
            ("https://a.example/%2e%2E/x", page("a.example", Some("/x/"))),
            ("https://a.example/a\\b", page("a.example", Some("/a/b/"))),
            (
                "https://a.example/%C3%89t%C3%A9",
                page("a.example", Some("/%C3%A9t%C3%A9/")),
            ),
            ("https://a.example/a//b", page("a.example", None)),
            (
                "https://BÜCHER.example/x",
                page("xn--bcher-kva.example", Some("/x/")),
            ),
            ("HTTPS://A.EXAMPLE", page("a.example", Some("/"))),
            ("https://0x7f.1/x", page("127.0.0.1", Some("/x/"))),
            ("ftp://a.example/x", None),
            ("/relative/path", None),
            ("https://", None),
        ];
        for (url, expected) in cases {
            assert_eq!(Page::parse(url), expected, "{url}");
        }
    }

    #[test]
    fn plain_urls_skip_the_parser() {
        for url in [
            "https://site1.example/news/5/article",
            "http://www.example.co.uk/2026/11/22/a-title_with~marks;v=1,2:3@x!$&'()*+",
            "https://a.example",
            "https://a.example/%C3%A9t%C3%A9/?utm=1",
        ] {
            assert!(plain_parts(url).is_some(), "{url}");
        }
    }

    /// Every combination of awkward pieces: the plain split, where it applies, must agree
    /// with the WHATWG parser.
    #[test]
    fn the_plain_split_agrees_with_the_parser() {
        let schemes = [
            "http://",
            "https://",
            "HTTP://",
            "https:",
            "https:/",
            "https:///",
            "https:\\\\",
            "ftp://",
            " https://",
            "https://\t",
        ];
        let hosts = [
            "a.example",
            "A.Example",
            "site1.example",
            "xn--bcher-kva.example",
            "Xn--a.example",
            "bücher.example",
            "1.2.3.4",
            "0x7f.1",
            "a.123",
            "a.1b",
            "a..b",
            ".a.b",
            "a.b.",
            "a_b.example",
            "-a.example",
            "a-.example",
            "a.example:8080",
            "a.example:",
            "u@a.example",
            "u:p@a.example",
            "[::1]",
            "a%2eexample",
            "a%41.example",
            "a b.example",
            "a\tb.example",
            "",
            "localhost",
            "a.example.",
            "ß.example",
            "a.xn--p1ai",
            "abcé.example",
            "abc.xnéa",
        ];
        let paths = [
            "",
            "/",
            "/News/",
            "/a/b/../c",
            "/a/./b",
            "/.",
            "/..",
            "/%2e/x",
            "/%2E%2e/x",
            "/.well-known/x",
            "/a.b/c.",
            "/a%2Fb",
            "/É",
            "/a b",
            "/a\\b",
            "/a//b",
            "/a|b",
            "/a^b",
            "/~user/",
            "/a;b=c",
            "/%zz",
            "/%C3%A9t%C3%A9",
            "/a'b",
            "/a\"b",
            "/a{b}",
            "/a`b",
            "/a<b>",
            "/a\tb",
            "/a\nb",
            "//a",
            "/a/%2e.",
            "/@:!$&()*+,=",
            "/%2é",
        ];
        let suffixes = ["", "?q=1", "#x", "?a#b", " ", "\t", "?\t#\n", "?/../x"];
        let mut plain = 0;
        for scheme in schemes {
            for host in hosts {
                for path in paths {
                    for suffix in suffixes {
                        let url = format!("{scheme}{host}{path}{suffix}");
                        if plain_parts(&url).is_some() {
                            plain += 1;
                        }
                        assert_eq!(Page::parse(&url), Page::parse_whatwg(&url), "{url:?}");
                    }
                }
            }
        }
        assert!(plain > 500, "the plain split applied to only {plain} URLs");
    }
}
