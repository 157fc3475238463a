//! The entry of every request: its host and path choose the area that answers it.

use crate::app::App;
use crate::http::{self, host_without_port, Request, Response, Service};
use crate::router::{self, Area, HostRole};
use crate::{api, contact, health};
use std::sync::Arc;

/// The service as the HTTP layer calls it.
pub struct Dispatch(pub Arc<App>);

impl Service for Dispatch {
    fn call(&self, request: Request) -> Response {
        let app = &self.0;
        match router::area(host_role(app, &request), request.path()) {
            Area::Management => api::handle(app, request),
            Area::ManagementNotFound => api::not_served(app),
            Area::Health => health::health(&request),
            Area::Ready => health::ready(app, &request),
            Area::Contact => contact::handle(app, request),
            Area::Fragment => app.delivery.handle(&request),
            Area::NotFound => http::error_response(404, "not_found", "not found"),
        }
    }
}

fn host_role(app: &App, request: &Request) -> HostRole {
    // Compared in place, ASCII case aside: the configured hosts are normalized, and this
    // runs on every request.
    let host = host_without_port(request.header("host").unwrap_or(""));
    let is = |configured: &Option<String>| {
        configured
            .as_deref()
            .is_some_and(|configured| configured.eq_ignore_ascii_case(host))
    };
    let config = &app.config;
    if is(&config.console_host) {
        HostRole::Console
    } else if is(&config.legacy_host) {
        HostRole::Legacy
    } else if config.base_host.is_none() || is(&config.base_host) {
        HostRole::Base
    } else {
        HostRole::Other
    }
}
