//! `GET /contact` (an HTML form) and `POST /contact` (form-urlencoded or JSON: name, email,
//! message). Messages are validated, stored, and limited per client IP against spam.
//! A JSON request gets JSON answers in the management error shape; a form gets HTML pages.

use crate::app::App;
use crate::error::ApiError;
use crate::html::escape_html;
use crate::http::{media_type, method_not_allowed, Body, Request, Response};
use crate::limits::Limit;
use crate::wire::{self, ContactMessage};
use serde_json::{json, Value};
use std::sync::Arc;

const FORM_PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Contact agentcard</title></head>
<body><main><h1>Contact us</h1>
<form method="post" action="/contact">
<p><label>Name <input name="name" required maxlength="200"></label></p>
<p><label>Email <input name="email" type="email" required maxlength="254"></label></p>
<p><label>Message <textarea name="message" required maxlength="5000"></textarea></label></p>
<p><button type="submit">Send</button></p>
</form></main></body></html>
"#;

pub fn handle(app: &Arc<App>, request: Request) -> Response {
    match request.method() {
        "GET" | "HEAD" => html(200, FORM_PAGE.to_string()),
        "POST" => post(app, request),
        _ => method_not_allowed("GET, HEAD, POST"),
    }
}

fn post(app: &Arc<App>, request: Request) -> Response {
    let wants_json = request
        .header("content-type")
        .is_some_and(media_type::is_json);
    let client_ip = app.client_ip(&request);
    let outcome = parse(&request).and_then(|message| {
        if !app.limiter.try_charge(&[Limit::Contact(client_ip)]) {
            return Err(ApiError::RateLimited);
        }
        let pool = app.pool.clone();
        app.blocking
            .run(move || -> Result<(), ApiError> {
                let mut db = pool.get()?;
                let ContactMessage {
                    name,
                    email,
                    message,
                } = &message;
                let client_ip = client_ip.to_string();
                crate::db::contact::store(&mut *db, name, email, message, &client_ip)?;
                Ok(())
            })
            .unwrap_or_else(|e| Err(ApiError::internal(e)))
    });
    match (outcome, wants_json) {
        (Ok(()), true) => Response::json(201, &json!({"status": "received"})),
        (Ok(()), false) => html(201, page("Thank you", "Your message was received.")),
        (Err(error), true) => error.response(),
        (Err(error), false) => html(error.status(), page("Message not sent", &error.message())),
    }
    .replace_header("Cache-Control", "no-store")
}

fn parse(request: &Request) -> Result<ContactMessage, ApiError> {
    let Body::Bytes(bytes) = &request.body else {
        return Err(ApiError::BodyTooLarge);
    };
    let content_type = request.header("content-type").unwrap_or("");
    let fields: Value = if media_type::is_json(content_type) {
        wire::parse_body(bytes)?
    } else if media_type::is_form(content_type) {
        let pairs = url::form_urlencoded::parse(bytes).into_owned();
        Value::Object(pairs.map(|(k, v)| (k, Value::String(v))).collect())
    } else {
        return Err(ApiError::UnsupportedMediaType);
    };
    wire::contact_message(&fields)
}

fn page(title: &str, text: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title></head>\n<body><main><h1>{t}</h1><p>{x}</p><p><a href=\"/contact\">Back</a></p></main></body></html>\n",
        t = escape_html(title),
        x = escape_html(text)
    )
}

fn html(status: u16, body: String) -> Response {
    Response::new(status)
        .header("Content-Type", "text/html; charset=UTF-8")
        .body(body.into_bytes())
}
