//! A browser's name as a person knows it ("Chrome on Linux"), from the User-Agent a session
//! was started with: the sessions page shows this, never the raw header. Two small tables,
//! read in order (a User-Agent names several engines: Edge says Chrome and Safari too).

/// `(token in the User-Agent, browser)`, the most specific first.
const BROWSERS: &[(&str, &str)] = &[
    ("Edg/", "Edge"),
    ("EdgA/", "Edge"),
    ("EdgiOS/", "Edge"),
    ("OPR/", "Opera"),
    ("SamsungBrowser/", "Samsung Internet"),
    ("Vivaldi/", "Vivaldi"),
    ("Firefox/", "Firefox"),
    ("FxiOS/", "Firefox"),
    ("CriOS/", "Chrome"),
    ("Chromium/", "Chromium"),
    ("Chrome/", "Chrome"),
    ("Safari/", "Safari"),
];

/// `(token in the User-Agent, system)`, the most specific first (Android says Linux too).
const SYSTEMS: &[(&str, &str)] = &[
    ("Android", "Android"),
    ("iPhone", "iOS"),
    ("iPad", "iPadOS"),
    ("CrOS", "ChromeOS"),
    ("Windows", "Windows"),
    ("Mac OS X", "macOS"),
    ("Macintosh", "macOS"),
    ("Linux", "Linux"),
];

/// "Firefox on macOS", "Chrome", "Unknown browser on Linux", or "Unknown browser".
pub fn name(user_agent: &str) -> String {
    let found = |table: &[(&str, &'static str)]| {
        table
            .iter()
            .find(|(token, _)| user_agent.contains(token))
            .map(|(_, name)| *name)
    };
    let browser = found(BROWSERS).unwrap_or("Unknown browser");
    match found(SYSTEMS) {
        Some(system) => format!("{browser} on {system}"),
        None => browser.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::name;

    #[test]
    fn common_browsers_are_named() {
        for (user_agent, expected) in [
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                 Chrome/120.0.0.0 Safari/537.36",
                "Chrome on Linux",
            ),
            (
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.1; rv:121.0) Gecko/20100101 \
                 Firefox/121.0",
                "Firefox on macOS",
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like \
                 Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.61",
                "Edge on Windows",
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 \
                 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
                "Safari on iOS",
            ),
            (
                "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like \
                 Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
                "Chrome on Android",
            ),
            ("curl/8.5.0", "Unknown browser"),
            ("", "Unknown browser"),
        ] {
            assert_eq!(name(user_agent), expected, "{user_agent}");
        }
    }
}
