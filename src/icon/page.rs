//! The icon a page names: its first `<link>` whose `rel` holds `icon` (so `shortcut icon` too)
//! or `apple-touch-icon`, found by lol_html (a browser's tokenizer, which bails out on markup it
//! cannot read unambiguously: what was found before stands).

use lol_html::{element, HtmlRewriter, Settings};
use url::Url;

/// The `rel` keywords that name an icon (compared ASCII case-insensitively, as HTML does).
const ICON_RELS: &[&str] = &["icon", "apple-touch-icon"];

/// The URL of the page's first icon link, its `href` resolved against `page_url`.
pub fn icon_link(page: &[u8], page_url: &Url) -> Option<Url> {
    let mut href = None;
    let mut rewriter = HtmlRewriter::new(
        Settings {
            element_content_handlers: vec![element!("link[rel][href]", |link| {
                let rel = link.get_attribute("rel").unwrap_or_default();
                let names_icon = rel
                    .split_ascii_whitespace()
                    .any(|word| ICON_RELS.iter().any(|r| word.eq_ignore_ascii_case(r)));
                if href.is_none() && names_icon {
                    href = link.get_attribute("href");
                }
                Ok(())
            })],
            ..Settings::new()
        },
        |_: &[u8]| {},
    );
    if rewriter.write(page).is_ok() {
        let _ = rewriter.end();
    } else {
        drop(rewriter);
    }
    page_url.join(href?.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_icon_link_resolved_against_the_page() {
        let page = Url::parse("https://news.example/section/").unwrap();
        let cases: &[(&str, Option<&str>)] = &[
            (
                r#"<html><head><link rel="stylesheet" href="/s.css"><link rel="icon" href="/i.png"><link rel="icon" href="/second.png">"#,
                Some("https://news.example/i.png"),
            ),
            (
                r#"<link rel="Shortcut Icon" href="fav.ico">"#,
                Some("https://news.example/section/fav.ico"),
            ),
            (
                r#"<LINK REL=apple-touch-icon HREF=//cdn.news.example/t.png>"#,
                Some("https://cdn.news.example/t.png"),
            ),
            (
                r#"<link rel="icon" href=" https://img.example/a.gif ">"#,
                Some("https://img.example/a.gif"),
            ),
            (
                r#"<link rel="iconic" href="/no.png"><link rel="icon">"#,
                None,
            ),
            (r#"<!-- <link rel="icon" href="/commented.png"> -->"#, None),
            (
                r#"<script>"<link rel='icon' href='/in-script.png'>"</script>"#,
                None,
            ),
            ("", None),
            ("\u{0}\u{ff}<<<>>>", None),
        ];
        for (html, expected) in cases {
            let found = icon_link(html.as_bytes(), &page);
            assert_eq!(found.as_ref().map(Url::as_str), *expected, "{html}");
        }
    }
}
