//! Routing-rule bodies: the `RouteWrite` object (`{path_prefix, match, ref}`, nothing else) of
//! `POST …/routes` and, as a list, of `PUT …/routes`; and the Route record `{id, path_prefix,
//! match, fragment_ref, fragment_id}`.

use super::{
    as_object, deny_unknown, deny_unknown_in_items, item_object, required_array, required_str,
    Object,
};
use crate::db::routes::RouteRow;
use crate::domain::{CanonicalPath, FragmentRef, MatchMode};
use crate::error::ApiError;
use crate::ops::routes::{too_many_routes, RouteWrite, MAX_ROUTES_PER_SITE};
use serde_json::{json, Value};
use std::collections::HashSet;

const MEMBERS: &[&str] = &["path_prefix", "match", "ref"];
const ROUTES: &str = "routes";

/// The body of `POST …/routes`.
pub fn route_write(body: &Value) -> Result<RouteWrite, ApiError> {
    let object = as_object(body)?;
    deny_unknown(object, MEMBERS, "")?;
    route_write_at(object, "")
}

/// The body of `PUT …/routes`: every unknown member first, then the ceiling, each item, and
/// duplicates after canonicalisation (the later one is named).
pub fn route_list(body: &Value) -> Result<Vec<RouteWrite>, ApiError> {
    let object = as_object(body)?;
    deny_unknown(object, &[ROUTES], "")?;
    deny_unknown_in_items(object, ROUTES, MEMBERS)?;
    let items = required_array(object, ROUTES)?;
    if items.len() > MAX_ROUTES_PER_SITE {
        return Err(too_many_routes());
    }
    let mut seen = HashSet::new();
    let mut routes = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let prefix = format!("{ROUTES}[{index}].");
        let route = route_write_at(item_object(item, ROUTES, index)?, &prefix)?;
        if !seen.insert((route.path.clone(), route.mode)) {
            return Err(ApiError::validation(
                format!("{prefix}path_prefix"),
                "the list already has a rule with this path and match mode",
            ));
        }
        routes.push(route);
    }
    Ok(routes)
}

/// Reads one RouteWrite whose fields are named `{prefix}path_prefix` and so on.
fn route_write_at(object: &Object, prefix: &str) -> Result<RouteWrite, ApiError> {
    let field = |name: &str| format!("{prefix}{name}");
    let path_field = field("path_prefix");
    let path = CanonicalPath::parse(
        required_str(object, "path_prefix", &path_field)?,
        &path_field,
    )?;
    let match_field = field("match");
    let mode = MatchMode::parse(required_str(object, "match", &match_field)?, &match_field)?;
    let ref_field = field("ref");
    let fragment_ref =
        FragmentRef::parse_with_field(required_str(object, "ref", &ref_field)?, &ref_field)?;
    Ok(RouteWrite {
        path,
        mode,
        fragment_ref,
    })
}

pub fn route_json(route: &RouteRow) -> Value {
    json!({
        "id": route.id,
        "path_prefix": route.path,
        "match": route.match_mode.as_str(),
        "fragment_ref": route.fragment_ref,
        "fragment_id": route.fragment_id,
    })
}

pub fn route_list_json(routes: &[RouteRow]) -> Value {
    json!({ "items": routes.iter().map(route_json).collect::<Vec<_>>() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(body: Value) -> (u16, String) {
        let error = route_list(&body).unwrap_err();
        let json = error.to_json();
        let field = json["error"]["field"].as_str().unwrap_or_default();
        (error.status(), field.to_owned())
    }

    fn rule(path: &str, mode: &str) -> Value {
        json!({"path_prefix": path, "match": mode, "ref": "a"})
    }

    #[test]
    fn route_lists_name_the_item_at_fault() {
        let cases = [
            (json!([]), (422, "body")),
            (json!({}), (422, "routes")),
            (json!({"routes": {}}), (422, "routes")),
            (json!({"routes": [rule("/a", "exact")], "x": 1}), (400, "x")),
            (json!({"routes": [5, {"x": 1}]}), (400, "routes[1].x")),
            (
                json!({"routes": [rule("/a", "exact"), 5]}),
                (422, "routes[1]"),
            ),
            (
                json!({"routes": [rule("/a", "exact"), rule("/a b", "exact")]}),
                (422, "routes[1].path_prefix"),
            ),
            (
                json!({"routes": [rule("/a", "both")]}),
                (422, "routes[0].match"),
            ),
            (
                json!({"routes": [{"path_prefix": "/a", "match": "exact", "ref": 1}]}),
                (422, "routes[0].ref"),
            ),
            (
                json!({"routes": [rule("/A/", "exact"), rule("/b", "exact"), rule(" a", " exact ")]}),
                (422, "routes[2].path_prefix"),
            ),
        ];
        for (body, (status, field)) in cases {
            assert_eq!(refusal(body.clone()), (status, field.to_owned()), "{body}");
        }
    }

    #[test]
    fn same_path_with_both_modes_is_no_duplicate() {
        let body = json!({"routes": [rule("/a", "exact"), rule("/A/", "prefix")]});
        let routes = route_list(&body).unwrap();
        assert_eq!(routes.len(), 2);
        assert_eq!(routes[1].path.as_str(), "/a/");
        assert_eq!(routes[1].mode, MatchMode::Prefix);
    }

    #[test]
    fn the_ceiling_counts_items() {
        let items =
            |n: usize| -> Vec<Value> { (0..n).map(|i| rule(&format!("/p{i}"), "exact")).collect() };
        assert_eq!(
            route_list(&json!({"routes": items(200)})).unwrap().len(),
            200
        );
        assert_eq!(
            refusal(json!({"routes": items(201)})),
            (422, "routes".to_owned())
        );
    }
}
