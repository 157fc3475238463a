//! A console form's body: `application/x-www-form-urlencoded`, within `http::BODY_LIMIT`
//! (a larger body is not even read), decoded by `url::form_urlencoded`.

use super::Refusal;
use crate::error::ApiError;
use crate::http::{media_type, Body, Request};

#[derive(Default)]
pub struct Form(Vec<(String, String)>);

impl Form {
    pub fn read(request: &Request) -> Result<Form, Refusal> {
        let Body::Bytes(bytes) = &request.body else {
            return Err(ApiError::BodyTooLarge.into());
        };
        let content_type = request.header("content-type").unwrap_or("");
        if !media_type::is_form(content_type) {
            return Err(Refusal::BadRequest(
                "send the form as application/x-www-form-urlencoded",
            ));
        }
        Ok(Form(
            url::form_urlencoded::parse(bytes).into_owned().collect(),
        ))
    }

    /// The first value of a field; empty when absent.
    pub fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// Every value of a field (a group of checkboxes), in the order sent.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}
