//! Site domains: the bare host name a publisher registers (`example.com`).
//! Sites are looked up by this exact string, so it is kept in one canonical
//! spelling (ASCII lowercase, no scheme, port, path or trailing dot), and
//! `www.example.com` stays a different site from `example.com`.

use std::fmt;

use super::percent::decode_strict;
use super::Invalid;

const FIELD: &str = "domain";
const MAX_LEN: usize = 253;
const MAX_LABEL_LEN: usize = 63;

/// A valid, lowercase host name of two or more labels.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DomainName(String);

impl DomainName {
    /// Trims, lowercases and checks `input`; field `"domain"` on refusal.
    pub fn parse(input: &str) -> Result<DomainName, Invalid> {
        let trimmed = input.trim();
        refuse_non_host(trimmed).map_err(|message| Invalid::new(FIELD, message))?;
        let host = trimmed.to_ascii_lowercase();
        check_host(&host).map_err(|message| Invalid::new(FIELD, message))?;
        Ok(DomainName(host))
    }

    /// Reads the `{domain}` URL path segment: decoded once, then [`DomainName::parse`]. A domain
    /// needs no escapes, but a client that encodes every path component still reaches its site.
    pub fn from_path_segment(raw: &str) -> Result<DomainName, Invalid> {
        let decoded = decode_strict(raw)
            .map_err(|_| Invalid::new(FIELD, "domain in the URL has an invalid percent escape"))?;
        Self::parse(&decoded)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DomainName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// True when `host` is `brand_domain` itself or one of its subdomains, so a
/// brand registered on `example.com` also covers `news.example.com`. Both
/// must already be lowercase. An empty brand matches nothing.
pub fn parent_or_self_matches(brand_domain: &str, host: &str) -> bool {
    if brand_domain.is_empty() {
        return false;
    }
    host == brand_domain
        || host
            .strip_suffix(brand_domain)
            .is_some_and(|rest| rest.ends_with('.'))
}

/// Refuses the common ways a URL or address gets pasted instead of a host,
/// each with a message that says what to remove.
fn refuse_non_host(s: &str) -> Result<(), &'static str> {
    if s.is_empty() {
        return Err("domain must not be empty");
    }
    if !s.is_ascii() {
        return Err("domain must be ASCII: write internationalised names in their xn-- form");
    }
    let refusals: [(bool, &'static str); 6] = [
        (
            s.contains("://"),
            "domain must be a bare host name without a scheme such as https://",
        ),
        (s.contains('@'), "domain must not contain user info (user@)"),
        (
            s.contains(['[', ']']),
            "domain must be a host name, not an IP address",
        ),
        (s.contains(':'), "domain must not contain a port (:80)"),
        (s.contains('/'), "domain must not contain a path (/...)"),
        (s.ends_with('.'), "domain must not end with a dot"),
    ];
    match refusals.iter().find(|(refused, _)| *refused) {
        Some(&(_, message)) => Err(message),
        None => Ok(()),
    }
}

/// Checks the host-name grammar on an already lowercased string.
fn check_host(host: &str) -> Result<(), &'static str> {
    if host.len() > MAX_LEN {
        return Err("domain must be at most 253 characters");
    }
    if !host.contains('.') {
        return Err("domain must have at least two labels, such as example.com");
    }
    if !host.split('.').all(is_label) {
        return Err("each domain label must be 1 to 63 characters among a-z 0-9 - and must not start or end with -");
    }
    // A name made only of numeric labels is an IPv4 address in disguise.
    if host
        .split('.')
        .all(|label| label.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err("domain must be a host name, not an IP address");
    }
    // Every page URL's host is read as a browser reads it (WHATWG): a name that reading changes
    // (a numeric last label makes it an IPv4 address, an `xn--` label must be valid Punycode)
    // would be a site no page could ever reach.
    match url::Host::parse(host) {
        Ok(url::Host::Domain(read)) if read == host => Ok(()),
        _ => Err("domain must be a host name a browser reads as written: no numeric last label, valid xn-- labels"),
    }
}

fn is_label(label: &str) -> bool {
    (1..=MAX_LABEL_LEN).contains(&label.len())
        && label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Result<&str, &str>) {
        let got = DomainName::parse(input);
        match expected {
            Ok(domain) => assert_eq!(
                got.as_ref().map(DomainName::as_str),
                Ok(domain),
                "{input:?}"
            ),
            Err(message) => assert_eq!(got, Err(Invalid::new("domain", message)), "{input:?}"),
        }
    }

    const LABEL_RULE: &str = "each domain label must be 1 to 63 characters among a-z 0-9 - and must not start or end with -";
    const IP: &str = "domain must be a host name, not an IP address";

    #[test]
    fn parses_domains() {
        let label63 = "a".repeat(63);
        let label64 = "a".repeat(64);
        let ok63 = format!("{label63}.com");
        let bad64 = format!("{label64}.com");
        // 4 labels of 63 + 3 dots = 255; trim to 253 and 254 exactly.
        let long = format!("{label63}.{label63}.{label63}.{label63}");
        let len253 = long.get(2..).unwrap_or_default().to_owned();
        let len254 = long.get(1..).unwrap_or_default().to_owned();
        let cases: Vec<(&str, Result<&str, &str>)> = vec![
            ("example.com", Ok("example.com")),
            ("www.example.com", Ok("www.example.com")),
            ("  Example.COM \t", Ok("example.com")),
            ("a.b", Ok("a.b")),
            ("xn--bcher-kva.example", Ok("xn--bcher-kva.example")),
            ("123.com", Ok("123.com")),
            (
                "news.example.123",
                Err("domain must be a host name a browser reads as written: no numeric last label, valid xn-- labels"),
            ),
            (
                "a.0x1f",
                Err("domain must be a host name a browser reads as written: no numeric last label, valid xn-- labels"),
            ),
            (
                "xn--bcxer-a.example",
                Err("domain must be a host name a browser reads as written: no numeric last label, valid xn-- labels"),
            ),
            ("a-b.c-d.e", Ok("a-b.c-d.e")),
            ("1.2.3.x4", Ok("1.2.3.x4")),
            (&ok63, Ok(&ok63)),
            (&len253, Ok(&len253)),
            (&len254, Err("domain must be at most 253 characters")),
            (&bad64, Err(LABEL_RULE)),
            ("", Err("domain must not be empty")),
            ("   ", Err("domain must not be empty")),
            (
                "bücher.de",
                Err("domain must be ASCII: write internationalised names in their xn-- form"),
            ),
            (
                "https://x.com",
                Err("domain must be a bare host name without a scheme such as https://"),
            ),
            ("x.com/a", Err("domain must not contain a path (/...)")),
            ("x.com:80", Err("domain must not contain a port (:80)")),
            ("u@x.com", Err("domain must not contain user info (user@)")),
            ("x.com.", Err("domain must not end with a dot")),
            ("1.2.3.4", Err(IP)),
            ("10.0.0.1.5", Err(IP)),
            ("[::1]", Err(IP)),
            (
                "localhost",
                Err("domain must have at least two labels, such as example.com"),
            ),
            (".x.com", Err(LABEL_RULE)),
            ("x..com", Err(LABEL_RULE)),
            ("-x.com", Err(LABEL_RULE)),
            ("x-.com", Err(LABEL_RULE)),
            ("x_y.com", Err(LABEL_RULE)),
            ("x y.com", Err(LABEL_RULE)),
        ];
        for (input, expected) in cases {
            check(input, expected);
        }
    }

    #[test]
    fn reads_path_segments() {
        let escape = "domain in the URL has an invalid percent escape";
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("example.com", Ok("example.com")),
            ("Example.COM", Ok("example.com")),
            ("%20example.com%20", Ok("example.com")),
            ("ex%61mple.com", Ok("example.com")),
            (
                "example.com%2Fa",
                Err("domain must not contain a path (/...)"),
            ),
            ("%zz.com", Err(escape)),
            ("%C3.com", Err(escape)),
        ];
        for &(raw, expected) in cases {
            let got = DomainName::from_path_segment(raw);
            match expected {
                Ok(domain) => {
                    assert_eq!(got.as_ref().map(DomainName::as_str), Ok(domain), "{raw:?}")
                }
                Err(message) => assert_eq!(got, Err(Invalid::new("domain", message)), "{raw:?}"),
            }
        }
    }

    #[test]
    fn www_and_apex_differ() {
        assert_ne!(
            DomainName::parse("www.example.com"),
            DomainName::parse("example.com")
        );
    }

    #[test]
    fn accessors_agree() {
        let cases = ["example.com", "news.example.org"];
        for input in cases {
            let domain = DomainName::parse(input);
            assert_eq!(
                domain.as_ref().map(ToString::to_string).as_deref(),
                Ok(input)
            );
            assert_eq!(domain.as_ref().map(DomainName::as_str), Ok(input));
        }
    }

    #[test]
    fn matches_parent_or_self() {
        let cases = [
            ("example.com", "example.com", true),
            ("example.com", "www.example.com", true),
            ("example.com", "a.b.example.com", true),
            ("example.com", "badexample.com", false),
            ("example.com", "example.com.evil.net", false),
            ("www.example.com", "example.com", false),
            ("example.com", "example.org", false),
            ("", "example.com", false),
            ("", "", false),
        ];
        for (brand, host, expected) in cases {
            assert_eq!(
                parent_or_self_matches(brand, host),
                expected,
                "{brand:?} {host:?}"
            );
        }
    }
}
