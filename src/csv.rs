//! CSV text (RFC 4180), as `admin report --format csv` and the audit log's download write it.

use std::borrow::Cow;

/// A field, quoted when it holds a comma, a quote or a line break.
pub fn field(text: &str) -> Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        Cow::Owned(format!("\"{}\"", text.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(text)
    }
}

/// A line of fields, ended by a line break.
pub fn line<S: AsRef<str>>(cells: &[S]) -> String {
    let fields: Vec<Cow<str>> = cells.iter().map(|c| field(c.as_ref())).collect();
    fields.join(",") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_when_needed() {
        let cases = [
            ("a.example/home", "a.example/home"),
            ("a.example/a,b", "\"a.example/a,b\""),
            ("say \"hi\"", "\"say \"\"hi\"\"\""),
            ("two\nlines", "\"two\nlines\""),
            ("", ""),
        ];
        for (text, expected) in cases {
            assert_eq!(field(text), expected);
        }
    }
}
