//! `openapi.json`, made from the code (`agentcard openapi` prints it): the frame
//! (`openapi_frame.json`: the introduction, servers, tags, the security scheme, and the
//! responses, parameters and headers the operations share), the schemas of `wire::SCHEMAS`,
//! and a path per operation of `OPERATIONS`. Its parameters, headers and the refusals every
//! operation shares are written from the path and the body, so a line of the table says only
//! what is its own. A test keeps the committed `openapi.json` equal to what this makes.

use super::operations::{Answer, Body, Endpoint, OPERATIONS};
use crate::wire;
use serde_json::{json, Map, Value};

const FRAME: &str = include_str!("openapi_frame.json");

/// Each refusal's response in `components.responses`, by status.
const REFUSALS: [(u16, &str); 9] = [
    (400, "BadRequest"),
    (401, "Unauthorized"),
    (403, "PlatformCard"),
    (404, "NotFound"),
    (409, "Conflict"),
    (422, "ValidationFailed"),
    (429, "RateLimited"),
    (500, "InternalError"),
    (503, "Unavailable"),
];

/// The refusals of every operation: the token, the limits, a failure of ours, the database
/// unavailable.
const EVERY_OPERATION_REFUSES: [u16; 4] = [401, 429, 500, 503];
/// The refusals of an operation with a body: its syntax or members (`400`), its shape (`422`).
const A_BODY_REFUSES: [u16; 2] = [400, 422];

/// The description of `/v1`, as `openapi.json` holds it (two-space indents, a final newline).
pub fn description() -> Result<String, String> {
    let document = document()?;
    serde_json::to_string_pretty(&document)
        .map(|text| text + "\n")
        .map_err(|error| error.to_string())
}

fn document() -> Result<Value, String> {
    let mut document: Value = parse("openapi_frame.json", FRAME)?;
    let mut schemas = Map::new();
    for part in wire::SCHEMAS {
        schemas.extend(object("wire::SCHEMAS", part)?);
    }
    document["components"]["schemas"] = Value::Object(schemas);
    let mut paths = Map::new();
    for endpoint in OPERATIONS {
        if !paths.contains_key(endpoint.path) {
            paths.insert(endpoint.path.to_owned(), path_item(endpoint.path)?);
        }
        paths[endpoint.path][endpoint.method.to_ascii_lowercase()] = operation(endpoint)?;
    }
    document["paths"] = Value::Object(paths);
    Ok(document)
}

/// A path's item before its operations: its parameters, when it has any.
fn path_item(path: &str) -> Result<Value, String> {
    let parameters: Vec<Value> = parameters(path)?
        .into_iter()
        .map(|name| reference("parameters", name))
        .collect();
    Ok(if parameters.is_empty() {
        json!({})
    } else {
        json!({ "parameters": parameters })
    })
}

/// The description of each parameter of `path`, named by the collection it names an object
/// of. The site's own path creates the site (`PUT`), so there its domain may name none yet.
fn parameters(path: &str) -> Result<Vec<&'static str>, String> {
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len() - 1;
    let mut names = Vec::new();
    for (at, pair) in segments.windows(2).enumerate() {
        if !pair[1].starts_with('{') {
            continue;
        }
        names.push(match (pair[0], at + 1 == last) {
            ("sites", true) => "DomainToCreate",
            ("sites", false) => "Domain",
            ("fragments", _) => "Ref",
            ("routes", _) => "RouteId",
            ("cards", _) => "CardId",
            ("keys", _) => "KeyId",
            _ => return Err(format!("{path}: no parameter described for {}", pair[1])),
        });
    }
    Ok(names)
}

fn operation(endpoint: &Endpoint) -> Result<Value, String> {
    let doc = &endpoint.doc;
    let mut responses = Map::new();
    for answer in doc.answers {
        responses.insert(answer.status.to_string(), success(answer)?);
    }
    for status in refusals(endpoint)? {
        let name = REFUSALS
            .iter()
            .find(|(refused, _)| *refused == status)
            .map(|(_, name)| *name)
            .ok_or_else(|| format!("{}: no response for {status}", doc.id))?;
        responses.insert(status.to_string(), reference("responses", name));
    }
    let mut operation = json!({
        "operationId": doc.id,
        "tags": [doc.tag],
        "summary": doc.summary,
        "description": doc.text,
        "responses": responses,
    });
    if let Some(body) = &endpoint.body {
        operation["requestBody"] = request_body(body)?;
    }
    Ok(operation)
}

/// The statuses an operation refuses with: every operation's, its body's, a `404` when its
/// path names an object that must exist, and its own.
fn refusals(endpoint: &Endpoint) -> Result<Vec<u16>, String> {
    let mut statuses = EVERY_OPERATION_REFUSES.to_vec();
    if endpoint.body.is_some() {
        statuses.extend(A_BODY_REFUSES);
    }
    let names_an_object = parameters(endpoint.path)?
        .iter()
        .any(|name| *name != "DomainToCreate");
    if names_an_object {
        statuses.push(404);
    }
    statuses.extend(endpoint.doc.refusals);
    Ok(statuses)
}

fn success(answer: &Answer) -> Result<Value, String> {
    Ok(json!({
        "description": answer.text,
        "headers": {
            "Cache-Control": reference("headers", "CacheControl"),
            "RateLimit-Policy": reference("headers", "RateLimitPolicy"),
        },
        "content": content(answer.schema, answer.examples)?,
    }))
}

fn request_body(body: &Body) -> Result<Value, String> {
    Ok(json!({
        "required": true,
        "description": body.text,
        "content": content(body.schema, body.examples)?,
    }))
}

/// A JSON content of the schema named, with its examples (none when `examples` is `{}`).
fn content(schema: &str, examples: &str) -> Result<Value, String> {
    let mut media = json!({ "schema": reference("schemas", schema) });
    let examples = object(schema, examples)?;
    if !examples.is_empty() {
        let named: Map<String, Value> = examples
            .into_iter()
            .map(|(name, value)| (name, json!({ "value": value })))
            .collect();
        media["examples"] = Value::Object(named);
    }
    Ok(json!({ "application/json": media }))
}

fn reference(kind: &str, name: &str) -> Value {
    json!({ "$ref": format!("#/components/{kind}/{name}") })
}

fn parse(what: &str, text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|error| format!("{what}: {error}"))
}

fn object(what: &str, text: &str) -> Result<Map<String, Value>, String> {
    match parse(what, text)? {
        Value::Object(object) => Ok(object),
        _ => Err(format!("{what}: not a JSON object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openapi_json_is_the_description_the_code_makes() {
        let made = description().unwrap();
        let committed = include_str!("../../openapi.json");
        let first_difference = committed
            .lines()
            .zip(made.lines())
            .position(|(committed, made)| committed != made);
        assert!(
            committed == made,
            "openapi.json differs from what the code makes (first at line {first_difference:?}); \
             `cargo run -- openapi > openapi.json` writes it again"
        );
    }

    #[test]
    fn every_reference_names_a_component() {
        let document = document().unwrap();
        let mut references = Vec::new();
        collect_references(&document, &mut references);
        assert!(references.len() > 100);
        for target in references {
            let path = target.strip_prefix('#').unwrap();
            assert!(document.pointer(path).is_some(), "{target} names nothing");
        }
    }

    fn collect_references(value: &Value, into: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                if let Some(Value::String(target)) = object.get("$ref") {
                    into.push(target.clone());
                }
                object.values().for_each(|v| collect_references(v, into));
            }
            Value::Array(items) => items.iter().for_each(|v| collect_references(v, into)),
            _ => {}
        }
    }

    #[test]
    fn every_tag_is_described_and_every_schema_named_once() {
        let document = document().unwrap();
        let tags: Vec<&Value> = document["tags"].as_array().unwrap().iter().collect();
        for endpoint in OPERATIONS {
            assert!(
                tags.iter().any(|tag| tag["name"] == endpoint.doc.tag),
                "{endpoint:?}"
            );
        }
        let named: usize = wire::SCHEMAS
            .iter()
            .map(|part| object("", part).unwrap().len())
            .sum();
        assert_eq!(
            named,
            document["components"]["schemas"].as_object().unwrap().len()
        );
    }
}
