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

fn media_type(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

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
