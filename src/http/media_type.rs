//! `Content-Type` values: the media type without its parameters, compared ASCII
//! case-insensitively (RFC 9110 §8.3.1).

/// `application/json`, parameters such as `charset` allowed.
pub fn is_json(content_type: &str) -> bool {
    media_type(content_type).eq_ignore_ascii_case("application/json")
}

/// `application/x-www-form-urlencoded`, as an HTML form posts.
pub fn is_form(content_type: &str) -> bool {
    media_type(content_type).eq_ignore_ascii_case("application/x-www-form-urlencoded")
}

/// `text/html`, parameters allowed.
pub fn is_html(content_type: &str) -> bool {
    media_type(content_type).eq_ignore_ascii_case("text/html")
}

/// The `charset` parameter's value, unquoted, when there is one.
pub fn charset(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        let value = value.trim().trim_matches('"');
        (name.trim().eq_ignore_ascii_case("charset") && !value.is_empty()).then_some(value)
    })
}

fn media_type(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_and_its_charset() {
        assert!(is_html("Text/HTML; charset=ISO-8859-1"));
        assert!(!is_html("text/htmlx"));
        assert_eq!(charset("text/html; Charset=\"utf-8\""), Some("utf-8"));
        assert_eq!(
            charset("text/html;foo=bar; charset=latin1 "),
            Some("latin1")
        );
        assert_eq!(charset("text/html"), None);
        assert_eq!(charset("text/html; charset="), None);
    }

    #[test]
    fn json_media_type_accepts_parameters_and_case() {
        let cases = [
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("Application/JSON;charset=UTF-8", true),
            ("text/json", false),
            ("application/jsonx", false),
            ("application/x-www-form-urlencoded", false),
            ("", false),
        ];
        for (value, expected) in cases {
            assert_eq!(is_json(value), expected, "{value}");
        }
    }
}
