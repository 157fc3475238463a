//! The route table of `/v1`: each operation's method and path template, and its handler, which
//! reads the request into the operation's typed input (path parameters decoded once, the body
//! by `wire` with unknown members refused), calls the operation of `ops` and encodes its
//! answer. `404`, `405` and the list `openapi.json` must describe all come from this table.
//!
//! A handler reads in the contract's order: the body first (`400`, `422`), then the path: a
//! `{ref}` that is no reference is `422` on `ref`, a `{domain}` or `{id}` that names nothing is
//! `404`, like one of another organisation.

use super::{OperationContext, Reply};
use crate::error::ApiError;
use crate::ids::{CardId, KeyId, RouteId};
use crate::ops;
use crate::wire;

/// One operation of `/v1` as the router finds it: its method, path and handler.
pub struct Endpoint {
    pub method: &'static str,
    /// The path, parameters in braces (`/v1/sites/{domain}`), as `openapi.json` writes it.
    pub path: &'static str,
    pub handle: fn(&mut OperationContext) -> Result<Reply, ApiError>,
}

/// Every operation of the management API.
pub const OPERATIONS: &[Endpoint] = &[
    Endpoint {
        method: "GET",
        path: "/v1/me",
        handle: |ctx| Ok(Reply::ok(wire::me_json(&ops::orgs::get_me(&ctx.caller)?))),
    },
    Endpoint {
        method: "GET",
        path: "/v1/sites",
        handle: |ctx| {
            let sites = ops::sites::list_sites(&mut *ctx.db, &ctx.caller)?;
            Ok(Reply::ok(wire::site_list_json(&sites)))
        },
    },
    Endpoint {
        method: "PUT",
        path: "/v1/sites/{domain}",
        handle: |ctx| {
            let write = wire::site_write(ctx.body())?;
            let domain = ctx.new_site()?;
            let saved = ops::sites::put_site(&mut *ctx.db, &ctx.caller, &domain, write)?;
            let body = wire::site_json(&saved.record);
            Ok(Reply::created_or_updated(saved.created, body))
        },
    },
    Endpoint {
        method: "GET",
        path: "/v1/sites/{domain}/fragments",
        handle: |ctx| {
            let domain = ctx.site()?;
            let fragments = ops::fragments::list_fragments(&mut *ctx.db, &ctx.caller, &domain)?;
            Ok(Reply::ok(wire::fragment_list_json(&fragments)))
        },
    },
    Endpoint {
        method: "PUT",
        path: "/v1/sites/{domain}/fragments/{ref}",
        handle: |ctx| {
            let write = wire::fragment_write(ctx.body())?;
            let fragment_ref = ctx.fragment_ref()?;
            let domain = ctx.site()?;
            let put = ops::fragments::put_fragment(
                &mut *ctx.db,
                &ctx.caller,
                &domain,
                &fragment_ref,
                write,
            )?;
            let body = wire::fragment_write_json(&put.fragment.record, &put.warnings);
            Ok(Reply::created_or_updated(put.fragment.created, body))
        },
    },
    Endpoint {
        method: "PUT",
        path: "/v1/sites/{domain}/default-fragment",
        handle: |ctx| {
            let fragment_ref = wire::default_fragment_write(ctx.body())?;
            let domain = ctx.site()?;
            let site = ops::sites::put_default_fragment(
                &mut *ctx.db,
                &ctx.caller,
                &domain,
                &fragment_ref,
            )?;
            Ok(Reply::ok(wire::site_json(&site)))
        },
    },
    Endpoint {
        method: "DELETE",
        path: "/v1/sites/{domain}/default-fragment",
        handle: |ctx| {
            wire::empty_write(ctx.body())?;
            let domain = ctx.site()?;
            let site = ops::sites::delete_default_fragment(&mut *ctx.db, &ctx.caller, &domain)?;
            Ok(Reply::ok(wire::site_json(&site)))
        },
    },
    Endpoint {
        method: "GET",
        path: "/v1/sites/{domain}/routes",
        handle: |ctx| {
            let domain = ctx.site()?;
            let routes = ops::routes::list_routes(&mut *ctx.db, &ctx.caller, &domain)?;
            Ok(Reply::ok(wire::route_list_json(&routes)))
        },
    },
    Endpoint {
        method: "PUT",
        path: "/v1/sites/{domain}/routes",
        handle: |ctx| {
            let routes = wire::route_list(ctx.body())?;
            let domain = ctx.site()?;
            let stored = ops::routes::replace_routes(&mut *ctx.db, &ctx.caller, &domain, &routes)?;
            Ok(Reply::ok(wire::route_list_json(&stored)))
        },
    },
    Endpoint {
        method: "POST",
        path: "/v1/sites/{domain}/routes",
        handle: |ctx| {
            let route = wire::route_write(ctx.body())?;
            let domain = ctx.site()?;
            let created = ops::routes::create_route(&mut *ctx.db, &ctx.caller, &domain, &route)?;
            Ok(Reply::created(wire::route_json(&created)))
        },
    },
    Endpoint {
        method: "DELETE",
        path: "/v1/sites/{domain}/routes/{id}",
        handle: |ctx| {
            wire::empty_write(ctx.body())?;
            let domain = ctx.site()?;
            let id = ctx.id(RouteId::parse)?;
            let removed = ops::routes::delete_route(&mut *ctx.db, &ctx.caller, &domain, &id)?;
            Ok(Reply::ok(wire::route_json(&removed)))
        },
    },
    Endpoint {
        method: "GET",
        path: "/v1/cards",
        handle: |ctx| {
            let cards = ops::cards::list_cards(&mut *ctx.db, &ctx.caller)?;
            Ok(Reply::ok(wire::card_list_json(&cards)))
        },
    },
    Endpoint {
        method: "GET",
        path: "/v1/cards/{id}/eligibility",
        handle: |ctx| {
            let id = ctx.id(CardId::parse)?;
            let items = ops::cards::get_eligibility(&mut *ctx.db, &ctx.caller, &id)?;
            Ok(Reply::ok(wire::eligibility_json(&items)))
        },
    },
    Endpoint {
        method: "PUT",
        path: "/v1/cards/{id}/eligibility",
        handle: |ctx| {
            let wanted = wire::eligibility_write(ctx.body())?;
            let id = ctx.id(CardId::parse)?;
            let items = ops::cards::replace_eligibility(&mut *ctx.db, &ctx.caller, &id, &wanted)?;
            Ok(Reply::ok(wire::eligibility_json(&items)))
        },
    },
    Endpoint {
        method: "GET",
        path: "/v1/keys",
        handle: |ctx| {
            let keys = ops::keys::list_keys(&mut *ctx.db, &ctx.caller)?;
            Ok(Reply::ok(wire::key_list_json(&keys)))
        },
    },
    Endpoint {
        method: "POST",
        path: "/v1/keys",
        handle: |ctx| {
            let name = wire::key_write(ctx.body())?;
            let prefix = &ctx.app.config.prefix;
            let created = ops::keys::create_key(&mut *ctx.db, &ctx.caller, name.as_ref(), prefix)?;
            let body = wire::created_key_json(&created.key, &created.secret);
            Ok(Reply::created(body))
        },
    },
    Endpoint {
        method: "DELETE",
        path: "/v1/keys/{id}",
        handle: |ctx| {
            wire::empty_write(ctx.body())?;
            let id = ctx.id(KeyId::parse)?;
            let key = ops::keys::revoke_key(&mut *ctx.db, &ctx.caller, &id)?;
            Ok(Reply::ok(wire::key_json(&key)))
        },
    },
];

/// A matched operation and its path parameters by name, still percent-encoded.
#[derive(Debug)]
pub struct Matched<'a> {
    pub endpoint: &'static Endpoint,
    pub params: Params<'a>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

/// The path parameters of a matched operation: template name (`domain`, `ref`, `id`) and
/// segment as sent.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Params<'a>(Vec<(&'static str, &'a str)>);

impl<'a> Params<'a> {
    /// The segment of parameter `name`; the table guarantees its presence for its handlers.
    pub fn get(&self, name: &str) -> &'a str {
        self.0
            .iter()
            .find(|(param, _)| *param == name)
            .map_or("", |(_, segment)| segment)
    }
}

/// `(method, path)` → operation; `404 not_found` for an unknown path, `405` with the allowed
/// methods for a known path and another method.
pub fn route<'a>(method: &str, path: &'a str) -> Result<Matched<'a>, ApiError> {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut allowed: Vec<&str> = Vec::new();
    for operation in OPERATIONS {
        let Some(params) = match_template(operation.path, &segments) else {
            continue;
        };
        if operation.method == method {
            return Ok(Matched {
                endpoint: operation,
                params,
            });
        }
        allowed.push(operation.method);
    }
    if allowed.is_empty() {
        Err(ApiError::NotFound)
    } else {
        Err(ApiError::MethodNotAllowed {
            allow: allowed.join(", "),
        })
    }
}

fn match_template<'a>(template: &'static str, segments: &[&'a str]) -> Option<Params<'a>> {
    let parts: Vec<&'static str> = template.split('/').skip(1).collect();
    if parts.len() != segments.len() {
        return None;
    }
    let mut params = Vec::new();
    for (part, segment) in parts.iter().zip(segments) {
        if let Some(name) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            if segment.is_empty() {
                return None;
            }
            params.push((name, *segment));
        } else if part != segment {
            return None;
        }
    }
    Some(Params(params))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Expected = Result<(&'static str, Vec<(&'static str, &'static str)>), u16>;

    #[test]
    fn paths_route_to_operations_or_404_405() {
        let cases: Vec<(&str, &str, Expected)> = vec![
            ("GET", "/v1/me", Ok(("/v1/me", vec![]))),
            (
                "PUT",
                "/v1/sites/example.com",
                Ok(("/v1/sites/{domain}", vec![("domain", "example.com")])),
            ),
            (
                "PUT",
                "/v1/sites/a.com/fragments/%2Fpolitics",
                Ok((
                    "/v1/sites/{domain}/fragments/{ref}",
                    vec![("domain", "a.com"), ("ref", "%2Fpolitics")],
                )),
            ),
            ("PUT", "/v1/sites/a.com/fragments/a/b", Err(404)),
            (
                "DELETE",
                "/v1/sites/a.com/routes/rte_1",
                Ok((
                    "/v1/sites/{domain}/routes/{id}",
                    vec![("domain", "a.com"), ("id", "rte_1")],
                )),
            ),
            ("GET", "/v1/me/", Err(404)),
            ("GET", "/v1/sites//fragments", Err(404)),
            ("GET", "/v1/nothing", Err(404)),
            ("POST", "/v1/me", Err(405)),
            ("DELETE", "/v1/keys", Err(405)),
        ];
        for (method, path, expected) in cases {
            let got = route(method, path)
                .map(|m| (m.endpoint.path, m.params.0))
                .map_err(|e| e.status());
            assert_eq!(got, expected, "{method} {path}");
        }
    }

    #[test]
    fn method_not_allowed_lists_the_allowed_methods() {
        let error = route("DELETE", "/v1/sites/a.com/routes").unwrap_err();
        assert!(matches!(error, ApiError::MethodNotAllowed { allow } if allow == "GET, PUT, POST"));
    }

    #[test]
    fn the_openapi_description_lists_the_same_operations_as_the_table() {
        let text = include_str!("../../openapi.json");
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
            .map(|o| (o.method.to_owned(), o.path.to_owned()))
            .collect();
        described.sort();
        routed.sort();
        assert_eq!(described, routed);
    }
}
