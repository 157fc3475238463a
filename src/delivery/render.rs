//! The card as served: one `<aside>` root carrying `data-card-id`, `data-brand` and `lang`,
//! every text HTML-escaped, no script, no style attribute, no external resource but the
//! card's own link; and the JSON shapes of `format=json` and `format=both`.
//! Rendered once per snapshot build, so serving a card copies bytes and computes nothing.

use crate::html::escape_html;
use serde_json::{json, Value};

/// The fields of a card that reach the page.
pub struct CardContent<'a> {
    pub id: &'a str,
    pub lang: &'a str,
    pub brand: &'a str,
    pub title: &'a str,
    pub body: &'a str,
    pub link_url: Option<&'a str>,
    pub link_label: Option<&'a str>,
}

/// The three bodies of a card, made once per snapshot build; a response copies the one it
/// serves.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub html: Box<[u8]>,
    pub json: Box<[u8]>,
    pub both: Box<[u8]>,
}

pub fn render(card: &CardContent) -> Rendered {
    let html = html(card);
    let card_json = card_json(card);
    Rendered {
        json: json!({ "card": card_json }).to_string().into_bytes().into(),
        both: json!({ "card": card_json, "html": html })
            .to_string()
            .into_bytes()
            .into(),
        html: html.into_bytes().into(),
    }
}

fn html(card: &CardContent) -> String {
    let mut out = format!(
        "<aside class=\"agentcard\" data-card-id=\"{}\" data-brand=\"{}\" lang=\"{}\">\
         <p class=\"agentcard-brand\">{}</p><p class=\"agentcard-title\">{}</p><p class=\"agentcard-body\">{}</p>",
        escape_html(card.id),
        escape_html(card.brand),
        escape_html(card.lang),
        escape_html(card.brand),
        escape_html(card.title),
        escape_html(card.body),
    );
    if let (Some(url), Some(label)) = (card.link_url, card.link_label) {
        out.push_str(&format!(
            "<p class=\"agentcard-link\"><a href=\"{}\" rel=\"noopener\">{}</a></p>",
            escape_html(url),
            escape_html(label)
        ));
    }
    out.push_str("</aside>");
    out
}

fn card_json(card: &CardContent) -> Value {
    json!({
        "id": card.id,
        "lang": card.lang,
        "brand": card.brand,
        "title": card.title,
        "body": card.body,
        "link_url": card.link_url,
        "link_label": card.link_label,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card<'a>(title: &'a str, link: Option<&'a str>) -> CardContent<'a> {
        CardContent {
            id: "crd_1",
            lang: "fr",
            brand: "Le <Monde> & \"Co\"",
            title,
            body: "Licence: <script>alert(1)</script>",
            link_url: link,
            link_label: link.map(|_| "Read more"),
        }
    }

    #[test]
    fn html_is_one_escaped_aside() {
        let out = render(&card("T'itle", Some("https://ex.com/?a=1&b=\"2\"")));
        let html = String::from_utf8(out.html.to_vec()).unwrap();
        assert!(html.starts_with("<aside class=\"agentcard\" data-card-id=\"crd_1\" data-brand=\"Le &lt;Monde&gt; &amp; &quot;Co&quot;\" lang=\"fr\">"));
        assert!(html.ends_with("</aside>"));
        assert_eq!(html.matches("<aside").count(), 1);
        assert!(!html.contains("<script") && !html.contains("style="));
        assert!(html.contains("T&#39;itle"));
        assert!(html.contains("href=\"https://ex.com/?a=1&amp;b=&quot;2&quot;\""));
    }

    #[test]
    fn json_shapes_follow_the_format() {
        let out = render(&card("T", None));
        let json: Value = serde_json::from_slice(&out.json).unwrap();
        assert_eq!(json["card"]["id"], "crd_1");
        assert_eq!(json["card"]["link_url"], Value::Null);
        assert_eq!(json.as_object().unwrap().len(), 1);
        let both: Value = serde_json::from_slice(&out.both).unwrap();
        assert_eq!(both["card"], json["card"]);
        assert_eq!(both["html"].as_str().unwrap().as_bytes(), &out.html[..]);
    }
}
