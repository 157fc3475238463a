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

/// The JSON Schemas of these bodies and records, by name (`super::SCHEMAS`).
pub const SCHEMAS: &str = r##"{
    "Match": {
        "type": "string",
        "enum": [
            "exact",
            "prefix"
        ],
        "description": "Match mode of a routing rule."
    },
    "MatchInput": {
        "type": "string",
        "pattern": "^[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*(?:exact|prefix)[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$",
        "description": "`exact` or `prefix` (case-sensitive); surrounding whitespace is ignored and not stored; any other value is `422` with field `match`.",
        "examples": [
            "exact",
            "prefix"
        ]
    },
    "PathPrefixInput": {
        "type": "string",
        "pattern": "^[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*(?!.*//)(?!(?:.*/)?(?:\\.|%2[Ee]){1,2}(?:/|[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$))/?(?:[A-Za-z0-9._~!$&'()*+,;=:@/-]{1,198}|(?:[A-Za-z0-9._~!$&'()*+,;=:@/\"<>\\[\\]^`{|}-]|%[0-7][0-9A-Fa-f]){1,66}|(?:[A-Za-z0-9._~!$&'()*+,;=:@/\"<>\\[\\]^`{|}\\xa1-\\u167f\\u1681-\\u1fff\\u200b-\\u2027\\u202a-\\u202e\\u2030-\\u205e\\u2060-\\u2fff\\u3001-\\ud7ff\\ue000-\\uffff-]|%[0-7][0-9A-Fa-f]|%[Cc][2-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Dd][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Ee]0%[ABab][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Ee][1-9A-Ca-cEeFf]%[89ABab][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Ee][Dd]%[89][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]){1,22}|(?:[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000?#\\\\%]|%[0-7][0-9A-Fa-f]|%[Cc][2-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Dd][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Ee]0%[ABab][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Ee][1-9A-Ca-cEeFf]%[89ABab][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Ee][Dd]%[89][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Ff]0%[9ABab][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Ff][1-3]%[89ABab][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]|%[Ff]4%8[0-9A-Fa-f]%[89ABab][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]){1,16})/?[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$",
        "description": "A rule's `path_prefix` as written. The server trims it (the trimmed value at most 512 UTF-16 code units), refuses a query (`?`), a hash (`#`), a backslash, inner whitespace or control characters, an empty segment (`//`), a dot segment (`.`, `..`, also written `%2e`), a `%` that does not start a two-hex-digit escape and escapes that do not decode to UTF-8, then brings it to its canonical form (leading `/` added, each segment percent-decoded, Unicode-lowercased and re-encoded with upper-case hex, unreserved characters and `!$&'()*+,;=:@` literal, trailing `/` added), which must be at most 200 characters. The pattern states every rule but the last exactly. The canonical length depends on Unicode lowercasing, which no pattern can compute, so the pattern admits the paths whose canonical form is certainly short enough: at most 198 characters among `A-Z a-z 0-9 - . _ ~ ! $ & ' ( ) * + , ; = : @ /` between an optional leading and trailing `/`; or at most 66 of those, the other printable ASCII characters and single escapes of ASCII; or at most 22 of any character of the Basic Multilingual Plane and escaped characters up to 3 UTF-8 bytes; or at most 16 characters or escaped characters of any kind. A longer path whose canonical form still fits is accepted by the server but not described: send its canonical form, which fits the first case when ASCII.",
        "examples": [
            "/actualite/",
            "Actualite/",
            "/",
            "/%C3%A9t%C3%A9/"
        ]
    },
    "Route": {
        "type": "object",
        "description": "A routing rule. A page resolves to a fragment by the exact rule first, then the longest prefix rule, then the site default fragment.",
        "required": [
            "id",
            "path_prefix",
            "match",
            "fragment_ref",
            "fragment_id"
        ],
        "properties": {
            "id": {
                "type": "string",
                "pattern": "^rte_[0-9a-z]{20,}$",
                "description": "Rule id (`rte_…`). Every replacement through `PUT …/routes` gives every rule a new id."
            },
            "path_prefix": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^/(?:[^/]+/)*$",
                "description": "Canonical path: lowercase, starts and ends with `/`, each segment canonically percent-encoded (upper-case hex). E.g. `Actualite/` is stored as `/actualite/`, `/Été` as `/%C3%A9t%C3%A9/`."
            },
            "match": {
                "$ref": "#/components/schemas/Match"
            },
            "fragment_ref": {
                "type": [
                    "string",
                    "null"
                ],
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[A-Za-z0-9/_.:-]{1,200}$",
                "not": {
                    "type": "string",
                    "pattern": "(^|/)\\.{1,2}(/|$)"
                },
                "description": "Target fragment's reference; null if that fragment has none."
            },
            "fragment_id": {
                "type": "string",
                "pattern": "^frg_[0-9a-z]{20,}$",
                "description": "Target fragment id: `frg_` followed by at least 20 characters of `[0-9a-z]`; random and unguessable, never sequential."
            }
        }
    },
    "RouteWrite": {
        "type": "object",
        "additionalProperties": false,
        "required": [
            "path_prefix",
            "match",
            "ref"
        ],
        "description": "A routing rule to write. A rule is unique by canonical path plus match mode within a site.",
        "properties": {
            "path_prefix": {
                "$ref": "#/components/schemas/PathPrefixInput"
            },
            "match": {
                "$ref": "#/components/schemas/MatchInput"
            },
            "ref": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[A-Za-z0-9/_.:-]{1,200}$",
                "not": {
                    "type": "string",
                    "pattern": "(^|/)\\.{1,2}(/|$)"
                },
                "description": "Reference of a fragment of this site (a paused one is accepted). Exact, case-sensitive, not trimmed, not encoded. Missing, not a string, invalid or not a fragment of this site: `422` with field `ref`."
            }
        }
    },
    "RoutesReplace": {
        "type": "object",
        "additionalProperties": false,
        "required": [
            "routes"
        ],
        "description": "Body of `PUT /v1/sites/{domain}/routes`: the complete new list of rules. `{\"routes\": []}` deletes every rule.",
        "properties": {
            "routes": {
                "type": "array",
                "maxItems": 200,
                "uniqueItems": true,
                "items": {
                    "$ref": "#/components/schemas/RouteWrite"
                },
                "description": "At most 200 rules (more: `422` with field `routes`). Errors inside an entry name it, e.g. `routes[3].path_prefix`; two entries with the same canonical path and match mode: `422` with field `routes[i].path_prefix` naming the later one."
            }
        }
    },
    "RouteList": {
        "type": "object",
        "required": [
            "items"
        ],
        "properties": {
            "items": {
                "type": "array",
                "maxItems": 200,
                "items": {
                    "$ref": "#/components/schemas/Route"
                },
                "description": "All rules of the site, sorted by path, then match mode (`exact` before `prefix`)."
            }
        }
    }
}"##;

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
