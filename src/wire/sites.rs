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
