//! Site bodies: the `PUT /v1/sites/{domain}` and `PUT …/default-fragment` requests, and the
//! site record `{domain, name, default_fragment_ref, default_fragment_id, icon, created_at,
//! updated_at}` that every site call answers with.

use super::{as_object, deny_unknown, optional_str, required_str};
use crate::db::sites::SiteRow;
use crate::domain::{FragmentRef, SiteName};
use crate::error::ApiError;
use crate::ops::sites::SiteWrite;
use serde_json::{json, Value};

const DEFAULT_FRAGMENT_REF: &str = "default_fragment_ref";

/// `PUT /v1/sites/{domain}`: each member absent (or null) keeps the current value.
pub fn site_write(body: &Value) -> Result<SiteWrite, ApiError> {
    let object = as_object(body)?;
    deny_unknown(object, &["name", DEFAULT_FRAGMENT_REF], "")?;
    let name = optional_str(object, "name", "name")?
        .map(SiteName::parse)
        .transpose()?;
    let default_fragment_ref = optional_str(object, DEFAULT_FRAGMENT_REF, DEFAULT_FRAGMENT_REF)?
        .map(|text| FragmentRef::parse_with_field(text, DEFAULT_FRAGMENT_REF))
        .transpose()?;
    Ok(SiteWrite {
        name,
        default_fragment_ref,
    })
}

/// `PUT …/default-fragment`: `{ref}`, a plain (never encoded) reference.
pub fn default_fragment_write(body: &Value) -> Result<FragmentRef, ApiError> {
    let object = as_object(body)?;
    deny_unknown(object, &["ref"], "")?;
    Ok(FragmentRef::parse(required_str(object, "ref", "ref")?)?)
}

pub fn site_json(site: &SiteRow) -> Value {
    json!({
        "domain": site.domain,
        "name": site.name,
        "default_fragment_ref": site.default_fragment_ref,
        "default_fragment_id": site.default_fragment_id,
        "icon": site.icon,
        "created_at": site.created_at,
        "updated_at": site.updated_at,
    })
}

pub fn site_list_json(sites: &[SiteRow]) -> Value {
    json!({ "items": sites.iter().map(site_json).collect::<Vec<_>>() })
}

/// The JSON Schemas of these bodies and records, by name (`super::SCHEMAS`).
pub const SCHEMAS: &str = r##"{
    "Site": {
        "type": "object",
        "description": "A site of the caller's organisation, addressed by its bare domain. The same domain may be registered by several organisations.",
        "required": [
            "domain",
            "name",
            "default_fragment_ref",
            "default_fragment_id",
            "icon",
            "created_at",
            "updated_at"
        ],
        "properties": {
            "domain": {
                "$ref": "#/components/schemas/Domain"
            },
            "name": {
                "type": "string",
                "description": "May be empty (`\"\"` for a site created without a name)."
            },
            "default_fragment_ref": {
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
                "description": "Reference of the site default fragment; null when there is no default, or when the default fragment has no reference."
            },
            "default_fragment_id": {
                "type": [
                    "string",
                    "null"
                ],
                "pattern": "^frg_[0-9a-z]{20,}$",
                "description": "Id (`frg_…`) of the site default fragment; null when there is no default. A default that was paused afterwards stays set (its pages answer `204` on the fragment endpoint)."
            },
            "icon": {
                "type": [
                    "string",
                    "null"
                ],
                "description": "The URL the site's icon was fetched from (after redirects): the service looks for it in the background the first time the site's page is opened in the console. Null until then, and while none was found (it is looked for again at most once an hour, when the page is opened). Not writable through the API."
            },
            "created_at": {
                "type": "string",
                "format": "date-time",
                "description": "Creation time (RFC 3339, UTC)."
            },
            "updated_at": {
                "type": "string",
                "format": "date-time",
                "description": "Last update time (RFC 3339, UTC)."
            }
        }
    },
    "SiteWrite": {
        "type": "object",
        "additionalProperties": false,
        "description": "Body of `PUT /v1/sites/{domain}`. The domain comes from the path only: a `domain` member is `400 unknown_field`. `{}` is valid (creates the site with name `\"\"`, or leaves an existing site unchanged).",
        "properties": {
            "name": {
                "type": [
                    "string",
                    "null"
                ],
                "pattern": "^[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*(?:[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000](?:[^\\x00-\\x1f\\x7f-\\x9f]{0,198}[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000])?)?[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$",
                "description": "Absent or null keeps the current name (`\"\"` on creation); `\"\"` (or only whitespace) clears it. Trimmed, then at most 200 characters, none of them a control character (U+0000–U+001F, U+007F–U+009F: tab and line breaks included); otherwise `422` with field `name`. Not stated by the contract, chosen here: the limit of a fragment name."
            },
            "default_fragment_ref": {
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
                "description": "Absent or null keeps the current default. Present, it must be the reference of an **active** fragment of this site, otherwise `422` with field `default_fragment_ref`. It cannot be combined with creating the site (the fragment does not exist yet), so on creation it is `422` too. Plain string, not encoded."
            }
        }
    },
    "DefaultFragmentWrite": {
        "type": "object",
        "additionalProperties": false,
        "required": [
            "ref"
        ],
        "description": "Body of `PUT /v1/sites/{domain}/default-fragment`.",
        "properties": {
            "ref": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[A-Za-z0-9/_.:-]{1,200}$",
                "not": {
                    "type": "string",
                    "pattern": "(^|/)\\.{1,2}(/|$)"
                },
                "description": "Reference of an **active** fragment of this site (plain string, not encoded). Missing, null, invalid, unknown, or a paused fragment: `422` with field `ref`."
            }
        }
    },
    "SiteList": {
        "type": "object",
        "required": [
            "items"
        ],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "$ref": "#/components/schemas/Site"
                },
                "description": "All sites of the organisation, sorted by domain."
            }
        }
    }
}"##;
