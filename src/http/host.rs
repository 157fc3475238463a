//! The `Host` header's name, matched without its port and ASCII case.

/// Lowercases a host and drops its port, as `Host` header matching ignores the port.
pub fn normalize_host(host: &str) -> String {
    host_without_port(host).to_ascii_lowercase()
}

/// The `Host` header's name: trimmed, without its port, case left as sent.
pub fn host_without_port(host: &str) -> &str {
    let host = host.trim();
    if host.starts_with('[') {
        host.split_inclusive(']').next().unwrap_or(host)
    } else {
        // A byte search: this runs on every request, and `split_once(':')` sets up a char
        // searcher that costs more than the few bytes it searches.
        match host.bytes().position(|b| b == b':') {
            Some(at) if host.as_bytes()[at + 1..].iter().all(u8::is_ascii_digit) => &host[..at],
            _ => host,
        }
    }
}

/// The characters of `uri-host [ ":" port ]` (RFC 3986: reg-name, IP literal, port).
pub fn is_host_value(value: &[u8]) -> bool {
    value
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:%[]".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_matched_without_port_and_case() {
        assert_eq!(normalize_host("API.Example.com:8443"), "api.example.com");
        assert_eq!(normalize_host("example.com"), "example.com");
        assert_eq!(normalize_host("[::1]:80"), "[::1]");
        assert_eq!(normalize_host("example.com:"), "example.com");
        assert_eq!(normalize_host("example.com:x1"), "example.com:x1");
    }
}
