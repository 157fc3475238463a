//! Fragment bodies: the whole-object `PUT …/fragments/{ref}` request and the fragment record
//! `{id, ref, name, lang, description, key_values, status, created_at, updated_at}`; the write
//! answers the same record plus `warnings`.

use super::{as_object, deny_unknown, optional_str, required_str};
use crate::db::fragments::FragmentRow;
use crate::domain::{Description, FragmentName, FragmentStatus, KeyValues, Lang};
use crate::error::ApiError;
use crate::ops::fragments::FragmentWrite;
use serde_json::{json, Value};

const MEMBERS: &[&str] = &["name", "lang", "description", "key_values", "status"];

pub fn fragment_write(body: &Value) -> Result<FragmentWrite, ApiError> {
    let object = as_object(body)?;
    deny_unknown(object, MEMBERS, "")?;
    let name = FragmentName::parse(required_str(object, "name", "name")?)?;
    let lang = match optional_str(object, "lang", "lang")? {
        Some(code) => Lang::parse(code, "lang")?,
        None => Lang::default(),
    };
    let description = match optional_str(object, "description", "description")? {
        Some(text) => Description::parse(text)?,
        None => None,
    };
    let key_values = match object.get("key_values") {
        None | Some(Value::Null) => KeyValues::default(),
        Some(value) => KeyValues::parse(value)?,
    };
    let status = optional_str(object, "status", "status")?
        .map(FragmentStatus::parse)
        .transpose()?;
    Ok(FragmentWrite {
        name,
        lang,
        description,
        key_values,
        status,
    })
}

pub fn fragment_json(fragment: &FragmentRow) -> Value {
    json!({
        "id": fragment.id,
        "ref": fragment.fragment_ref,
        "name": fragment.name,
        "lang": fragment.lang.as_str(),
        "description": fragment.description,
        "key_values": fragment.key_values,
        "status": fragment.status.as_str(),
        "created_at": fragment.created_at,
        "updated_at": fragment.updated_at,
    })
}

/// The answer of a fragment write: the record plus its `warnings`.
pub fn fragment_write_json(fragment: &FragmentRow, warnings: &[String]) -> Value {
    let mut record = fragment_json(fragment);
    record["warnings"] = json!(warnings);
    record
}

pub fn fragment_list_json(fragments: &[FragmentRow]) -> Value {
    json!({ "items": fragments.iter().map(fragment_json).collect::<Vec<_>>() })
}
