//! HTML text: the escaping of the cards' markup and the contact pages, and how the edge writes
//! a card's text into a page.

/// Escapes the five characters that matter in HTML text and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes text once as the edge writes the brand line: `&`, `<`, `>` and `"` (decisions.md,
/// "Edge").
pub fn escape_text(text: &str) -> String {
    escape_html(text).replace("&#39;", "'")
}

/// Writes every non-ASCII character as a decimal character reference, so that the text reads
/// the same in a page of any ASCII-compatible charset.
pub fn references_for_non_ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c.is_ascii() {
            true => out.push(c),
            false => out.push_str(&format!("&#{};", u32::from(c))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escaping_covers_markup_characters() {
        assert_eq!(
            escape_html("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(escape_text("<'&#39;\">"), "&lt;'&amp;#39;&quot;&gt;");
    }

    #[test]
    fn non_ascii_becomes_references() {
        assert_eq!(
            references_for_non_ascii("Été & 😀"),
            "&#201;t&#233; & &#128512;"
        );
    }
}
