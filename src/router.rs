//! Where a request goes: first by host and path area (`/v1`, `/fragment`, the other routes),
//! then, under `/v1`, by method and path segments to one operation. Decides `404` and `405`.

use crate::error::ApiError;

/// The role of the `Host` a request was sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostRole {
    Base,
    Console,
    Legacy,
    /// A configured base host exists and this is none of the three.
    Other,
}

/// Which part of the service answers a path, before looking at the method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    Management,
    Fragment,
    Health,
    Ready,
    Contact,
    /// Every other path of the console host: the console's pages.
    Console,
    NotFound,
    /// `/v1` on a host that does not serve it: `404` in the management envelope.
    ManagementNotFound,
}

impl Area {
    /// The areas as the operator metrics count requests: `/v1` on a host that does not serve
    /// it counts under `management`, whose `404` it answers.
    pub const COUNTED: [&'static str; 7] = [
        "management",
        "fragment",
        "health",
        "ready",
        "contact",
        "not_found",
        "console",
    ];

    /// This area's index in [`Area::COUNTED`].
    pub fn counted_as(self) -> usize {
        match self {
            Area::Management | Area::ManagementNotFound => 0,
            Area::Fragment => 1,
            Area::Health => 2,
            Area::Ready => 3,
            Area::Contact => 4,
            Area::NotFound => 5,
            Area::Console => 6,
        }
    }
}

/// Host and path → area, as decisions.md "Names and process" fixes it: the console host
/// answers `404` on `/v1` and `/fragment` and serves the console's pages on its other paths;
/// the legacy host serves `/fragment` and `/health` only.
pub fn area(host: HostRole, path: &str) -> Area {
    let management = path == "/v1" || path.starts_with("/v1/");
    match (host, path) {
        (_, "/health") => Area::Health,
        (HostRole::Base, _) if management => Area::Management,
        (HostRole::Console | HostRole::Legacy | HostRole::Other, _) if management => {
            Area::ManagementNotFound
        }
        (HostRole::Base | HostRole::Legacy, "/fragment") => Area::Fragment,
        (HostRole::Base | HostRole::Console, "/ready") => Area::Ready,
        (HostRole::Base | HostRole::Console, "/contact") => Area::Contact,
        (HostRole::Console, "/fragment") => Area::NotFound,
        (HostRole::Console, _) => Area::Console,
        _ => Area::NotFound,
    }
}

/// Every operation of the management API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    GetMe,
    ListSites,
    PutSite,
    ListFragments,
    PutFragment,
    PutDefaultFragment,
    DeleteDefaultFragment,
    ListRoutes,
    ReplaceRoutes,
    CreateRoute,
    DeleteRoute,
    ListCards,
    GetEligibility,
    ReplaceEligibility,
    ListKeys,
    CreateKey,
    RevokeKey,
}

/// The route table: method, path template, operation. `openapi.json` lists the same set
/// (a test compares them).
pub const OPERATIONS: &[(&str, &str, Op)] = &[
    ("GET", "/v1/me", Op::GetMe),
    ("GET", "/v1/sites", Op::ListSites),
    ("PUT", "/v1/sites/{domain}", Op::PutSite),
    ("GET", "/v1/sites/{domain}/fragments", Op::ListFragments),
    ("PUT", "/v1/sites/{domain}/fragments/{ref}", Op::PutFragment),
    (
        "PUT",
        "/v1/sites/{domain}/default-fragment",
        Op::PutDefaultFragment,
    ),
    (
        "DELETE",
        "/v1/sites/{domain}/default-fragment",
        Op::DeleteDefaultFragment,
    ),
    ("GET", "/v1/sites/{domain}/routes", Op::ListRoutes),
    ("PUT", "/v1/sites/{domain}/routes", Op::ReplaceRoutes),
    ("POST", "/v1/sites/{domain}/routes", Op::CreateRoute),
    ("DELETE", "/v1/sites/{domain}/routes/{id}", Op::DeleteRoute),
    ("GET", "/v1/cards", Op::ListCards),
    ("GET", "/v1/cards/{id}/eligibility", Op::GetEligibility),
    ("PUT", "/v1/cards/{id}/eligibility", Op::ReplaceEligibility),
    ("GET", "/v1/keys", Op::ListKeys),
    ("POST", "/v1/keys", Op::CreateKey),
    ("DELETE", "/v1/keys/{id}", Op::RevokeKey),
];

/// A matched operation and its path parameters, in template order, still percent-encoded.
#[derive(Debug, PartialEq, Eq)]
pub struct Matched<'a> {
    pub op: Op,
    pub params: Vec<&'a str>,
}

/// `(method, path)` → operation; `404 not_found` for an unknown path, `405` with the allowed
/// methods for a known path and another method.
pub fn route<'a>(method: &str, path: &'a str) -> Result<Matched<'a>, ApiError> {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut allowed: Vec<&str> = Vec::new();
    for &(op_method, template, op) in OPERATIONS {
        let Some(params) = match_template(template, &segments) else {
            continue;
        };
        if op_method == method {
            return Ok(Matched { op, params });
        }
        allowed.push(op_method);
    }
    if allowed.is_empty() {
        Err(ApiError::NotFound)
    } else {
        Err(ApiError::MethodNotAllowed {
            allow: allowed.join(", "),
        })
    }
}

fn match_template<'a>(template: &str, segments: &[&'a str]) -> Option<Vec<&'a str>> {
    let parts: Vec<&str> = template.split('/').skip(1).collect();
    if parts.len() != segments.len() {
        return None;
    }
    let mut params = Vec::new();
    for (part, segment) in parts.iter().zip(segments) {
        if part.starts_with('{') {
            if segment.is_empty() {
                return None;
            }
            params.push(*segment);
        } else if part != segment {
            return None;
        }
    }
    Some(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Expected = Result<(Op, Vec<&'static str>), u16>;

    #[test]
    fn paths_route_to_operations_or_404_405() {
        let cases: Vec<(&str, &str, Expected)> = vec![
            ("GET", "/v1/me", Ok((Op::GetMe, vec![]))),
            (
                "PUT",
                "/v1/sites/example.com",
                Ok((Op::PutSite, vec!["example.com"])),
            ),
            (
                "PUT",
                "/v1/sites/a.com/fragments/%2Fpolitics",
                Ok((Op::PutFragment, vec!["a.com", "%2Fpolitics"])),
            ),
            ("PUT", "/v1/sites/a.com/fragments/a/b", Err(404)),
            (
                "DELETE",
                "/v1/sites/a.com/routes/rte_1",
                Ok((Op::DeleteRoute, vec!["a.com", "rte_1"])),
            ),
            ("GET", "/v1/me/", Err(404)),
            ("GET", "/v1/sites//fragments", Err(404)),
            ("GET", "/v1/nothing", Err(404)),
            ("POST", "/v1/me", Err(405)),
            ("DELETE", "/v1/keys", Err(405)),
        ];
        for (method, path, expected) in cases {
            let got = route(method, path)
                .map(|m| (m.op, m.params))
                .map_err(|e| e.status());
            assert_eq!(got, expected, "{method} {path}");
        }
    }

    #[test]
    fn areas_are_counted_under_their_names() {
        let areas = [
            Area::Management,
            Area::ManagementNotFound,
            Area::Fragment,
            Area::Health,
            Area::Ready,
            Area::Contact,
            Area::NotFound,
            Area::Console,
        ];
        let names = areas.map(|area| Area::COUNTED[area.counted_as()]);
        let expected = "management management fragment health ready contact not_found console";
        assert_eq!(
            names.join(" "),
            expected,
            "/v1 on another host counts as management"
        );
    }

    #[test]
    fn method_not_allowed_lists_the_allowed_methods() {
        let error = route("DELETE", "/v1/sites/a.com/routes").unwrap_err();
        assert!(matches!(error, ApiError::MethodNotAllowed { allow } if allow == "GET, PUT, POST"));
    }

    #[test]
    fn hosts_reach_their_areas() {
        let cases = [
            (HostRole::Base, "/v1/me", Area::Management),
            (HostRole::Console, "/v1/me", Area::ManagementNotFound),
            (HostRole::Legacy, "/v1/me", Area::ManagementNotFound),
            (HostRole::Base, "/fragment", Area::Fragment),
            (HostRole::Legacy, "/fragment", Area::Fragment),
            (HostRole::Console, "/fragment", Area::NotFound),
            (HostRole::Legacy, "/health", Area::Health),
            (HostRole::Legacy, "/ready", Area::NotFound),
            (HostRole::Console, "/contact", Area::Contact),
            (HostRole::Console, "/", Area::Console),
            (HostRole::Console, "/members", Area::Console),
            (HostRole::Console, "/health", Area::Health),
            (HostRole::Base, "/members", Area::NotFound),
            (HostRole::Legacy, "/sign-in", Area::NotFound),
            (HostRole::Other, "/sign-in", Area::NotFound),
            (HostRole::Base, "/v1x", Area::NotFound),
        ];
        for (host, path, expected) in cases {
            assert_eq!(area(host, path), expected, "{host:?} {path}");
        }
    }

    #[test]
    fn the_openapi_description_lists_the_same_operations_as_the_router() {
        let text = include_str!("../openapi.json");
        let description: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(description["openapi"], "3.1.0");
        assert_eq!(description["info"]["version"], "v1");
        let mut described: Vec<(String, String)> = Vec::new();
        for (path, item) in description["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                if ["get", "put", "post", "delete", "patch", "head", "options"]
                    .contains(&method.as_str())
                {
                    described.push((method.to_uppercase(), path.clone()));
                }
            }
        }
        let mut routed: Vec<(String, String)> = OPERATIONS
            .iter()
            .map(|(method, path, _)| (method.to_string(), path.to_string()))
            .collect();
        described.sort();
        routed.sort();
        assert_eq!(described, routed);
    }
}
