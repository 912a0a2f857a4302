//! The OpenAPI 3.1 Link Objects of the document: how one operation's 200
//! answer feeds the next (quote → intent → execute → status; a created
//! key, hook, session, primitive, spend or erasure read back, revoked or
//! cancelled; netting terms → enrol → deposit / withdraw). They are for a
//! client that walks the API, and for schemathesis' stateful phase
//! (`host/bin/tests/it/api_contract.rs`), which follows them with the ids
//! the host really answered.
//!
//! One table, [`LINKS`]; [`apply`] writes each link under its source
//! operation's `responses.200.links`, keyed by its name, the target named
//! by `operationRef` (a JSON pointer to `#/paths/<path>/<method>`: the
//! handlers' operationIds are their function names, not unique across
//! features). Values are runtime expressions (`$response.body#/id`,
//! `$request.body#/address`, `Bearer {$response.body#/bearer}`) or
//! constants. Nothing secret is ever a constant here: the owner's
//! credential is the caller's. [`dangling`] lists every link whose source
//! or target is not in the document, whose parameter the target does not
//! declare, or whose pointer names a field the source's schemas do not
//! have (the API tests assert it lists none).

use serde_json::{json, Map, Value};

/// One link: from the 200 answer of `from` to the operation `to`.
pub struct Link {
    /// The operation whose 200 answer it follows: `(method, path)`.
    pub from: (&'static str, &'static str),
    /// Its key in that answer's `links`.
    pub name: &'static str,
    /// The operation it feeds: `(method, path)`.
    pub to: (&'static str, &'static str),
    /// `in.name` of a parameter of `to` → a runtime expression or a
    /// constant.
    pub parameters: &'static [(&'static str, &'static str)],
    /// The request body of `to`: an object whose values are runtime
    /// expressions or constants, or one expression naming a whole object
    /// (an execute body the answer serves).
    pub body: Option<fn() -> Value>,
    /// What following it does.
    pub description: &'static str,
}

mod table;

pub use table::LINKS;

/// `~` and `/` escaped for a JSON pointer token (RFC 6901).
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The `operationRef` of `(method, path)`.
fn operation_ref((method, path): (&str, &str)) -> String {
    format!("#/paths/{}/{method}", escape(path))
}

/// The Link Object of `l`.
fn link_object(l: &Link) -> Value {
    let mut o = Map::new();
    o.insert("operationRef".into(), operation_ref(l.to).into());
    if !l.parameters.is_empty() {
        let p: Map<String, Value> = l
            .parameters
            .iter()
            .map(|(k, v)| ((*k).to_string(), Value::from(*v)))
            .collect();
        o.insert("parameters".into(), p.into());
    }
    if let Some(body) = l.body {
        o.insert("requestBody".into(), body());
    }
    o.insert("description".into(), l.description.into());
    Value::Object(o)
}

/// Writes every link of [`LINKS`] into `doc` (a source operation missing
/// from it, or without a 200 answer, is skipped: [`dangling`] names it).
pub fn apply(doc: &mut Value) {
    for l in LINKS {
        let (method, path) = l.from;
        let Some(ok) = doc
            .pointer_mut(&format!("/paths/{}/{method}/responses/200", escape(path)))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        let links = ok.entry("links").or_insert_with(|| json!({}));
        links[l.name] = link_object(l);
    }
}

/// Every problem of the links in `doc` (none: each source and target is
/// in it, each parameter is declared by its target, each `$response.body`
/// pointer names a field of the source's 200 schema, each `$request.body`
/// pointer a field of its request body's and each `$request.header` a
/// header it declares).
pub fn dangling(doc: &Value) -> Vec<String> {
    dangling_in(doc, LINKS)
}

/// [`dangling`] for the links `links`.
fn dangling_in(doc: &Value, links: &[Link]) -> Vec<String> {
    let mut problems = Vec::new();
    for l in links {
        let at = format!("{} {} → {}: ", l.from.0, l.from.1, l.name);
        let Some(from) = operation(doc, l.from) else {
            problems.push(format!("{at}no source operation"));
            continue;
        };
        if from
            .pointer(&format!("/responses/200/links/{}", l.name))
            .is_none()
        {
            problems.push(format!("{at}not in the document"));
        }
        let Some(to) = operation(doc, l.to) else {
            problems.push(format!("{at}no target {} {}", l.to.0, l.to.1));
            continue;
        };
        for (key, _) in l.parameters {
            let (place, name) = key.split_once('.').unwrap_or(("", key));
            if !declares(to, place, name) {
                problems.push(format!("{at}{} {} declares no {key}", l.to.0, l.to.1));
            }
        }
        if l.body.is_some() && to.get("requestBody").is_none() {
            problems.push(format!("{at}{} {} takes no body", l.to.0, l.to.1));
        }
        let mut values: Vec<String> = l.parameters.iter().map(|(_, v)| (*v).to_string()).collect();
        if let Some(body) = l.body {
            strings(&body(), &mut values);
        }
        for v in values {
            for (source, pointer) in expressions(&v) {
                let schema = match source {
                    "$response.body" => {
                        from.pointer("/responses/200/content/application~1json/schema")
                    }
                    _ => from.pointer("/requestBody/content/application~1json/schema"),
                };
                if !schema.is_some_and(|s| resolves(doc, s, &pointer, 0)) {
                    problems.push(format!("{at}{source}#{pointer} names no field"));
                }
            }
            for header in request_headers(&v) {
                if !declares(from, "header", header) {
                    problems.push(format!("{at}the source declares no header {header}"));
                }
            }
        }
    }
    problems
}

/// Whether the operation `op` declares the parameter `name` in `place`
/// (header names compared without case).
fn declares(op: &Value, place: &str, name: &str) -> bool {
    op["parameters"].as_array().is_some_and(|ps| {
        ps.iter().any(|p| {
            p["in"] == place
                && p["name"].as_str().is_some_and(|n| {
                    n == name || (place == "header" && n.eq_ignore_ascii_case(name))
                })
        })
    })
}

/// The operation `(method, path)` of `doc`.
fn operation<'a>(doc: &'a Value, (method, path): (&str, &str)) -> Option<&'a Value> {
    doc["paths"].get(path)?.get(method)
}

/// Every string in `v`, into `out`.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// The `$response.body#…` and `$request.body#…` expressions in `v` (a
/// whole value or `{…}` embedded in text), with their pointers.
fn expressions(v: &str) -> Vec<(&'static str, String)> {
    let mut found = Vec::new();
    for source in ["$response.body", "$request.body"] {
        for (i, _) in v.match_indices(&format!("{source}#")) {
            let rest = &v[i + source.len() + 1..];
            let end = rest.find(['}', ' ']).unwrap_or(rest.len());
            found.push((source, rest[..end].to_string()));
        }
    }
    found
}

/// The header names `$request.header.<name>` expressions in `v` read.
fn request_headers(v: &str) -> Vec<&str> {
    v.match_indices("$request.header.")
        .map(|(i, m)| {
            let rest = &v[i + m.len()..];
            &rest[..rest.find(['}', ' ']).unwrap_or(rest.len())]
        })
        .collect()
}

/// Whether `pointer` (RFC 6901, from the value's root) names something
/// `schema` (a schema of `doc`) describes: a declared property, an array
/// item, through `$ref`, `allOf`, `oneOf` and `anyOf`.
fn resolves(doc: &Value, schema: &Value, pointer: &str, depth: usize) -> bool {
    if depth > 32 {
        return false;
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return doc
            .pointer(r.trim_start_matches('#'))
            .is_some_and(|s| resolves(doc, s, pointer, depth + 1));
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(parts) = schema.get(key).and_then(Value::as_array) {
            if parts.iter().any(|s| resolves(doc, s, pointer, depth + 1)) {
                return true;
            }
        }
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return pointer.is_empty();
    };
    let (token, rest) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let token = token.replace("~1", "/").replace("~0", "~");
    if let Some(p) = schema.get("properties").and_then(|p| p.get(&token)) {
        return resolves(doc, p, rest, depth + 1);
    }
    match schema.get("items") {
        Some(items) if token.parse::<usize>().is_ok() => resolves(doc, items, rest, depth + 1),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        json!({
            "paths": {
                "/api/things": {"post": {
                    "requestBody": {"content": {"application/json": {"schema": {"properties": {"owner": {}}}}}},
                    "parameters": [{"in": "header", "name": "x-key"}],
                    "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}
                }},
                "/api/things/{id}": {"get": {
                    "parameters": [{"in": "path", "name": "id"}],
                    "responses": {"200": {}}
                }}
            },
            "components": {"schemas": {"Thing": {"allOf": [
                {"properties": {"id": {"type": "string"}}},
                {"properties": {"legs": {"type": "array", "items": {"properties": {"n": {}}}}}}
            ]}}}
        })
    }

    #[test]
    fn pointers_resolve_through_refs_compositions_and_items() {
        let d = doc();
        let s = d
            .pointer("/paths/~1api~1things/post/responses/200/content/application~1json/schema")
            .unwrap();
        assert!(resolves(&d, s, "/id", 0));
        assert!(resolves(&d, s, "/legs/0/n", 0));
        assert!(!resolves(&d, s, "/legs/0/m", 0));
        assert!(!resolves(&d, s, "/name", 0));
    }

    #[test]
    fn a_link_naming_what_the_document_lacks_is_dangling() {
        let good = Link {
            from: ("post", "/api/things"),
            name: "thing",
            to: ("get", "/api/things/{id}"),
            parameters: &[("path.id", "$response.body#/id")],
            body: None,
            description: "",
        };
        let bad = [
            Link {
                name: "field",
                parameters: &[("path.id", "$response.body#/name")],
                ..good
            },
            Link {
                name: "parameter",
                parameters: &[("query.id", "$request.body#/owner")],
                ..good
            },
            Link {
                name: "header",
                parameters: &[("path.id", "$request.header.x-other")],
                ..good
            },
            Link {
                name: "body",
                body: Some(|| json!({"owner": "$request.body#/owner"})),
                ..good
            },
            Link {
                name: "target",
                to: ("delete", "/api/things/{id}"),
                ..good
            },
        ];
        let mut d = doc();
        assert_eq!(
            dangling_in(&d, std::slice::from_ref(&good)),
            vec!["post /api/things → thing: not in the document".to_string()]
        );
        d["paths"]["/api/things"]["post"]["responses"]["200"]["links"] = json!({"thing": {}, "field": {}, "parameter": {}, "header": {}, "body": {}, "target": {}});
        assert!(dangling_in(&d, &[good]).is_empty());
        let problems = dangling_in(&d, &bad);
        for (problem, name) in
            problems
                .iter()
                .zip(["field", "parameter", "header", "body", "target"])
        {
            assert!(problem.contains(&format!("→ {name}:")), "{problems:?}");
        }
        assert_eq!(problems.len(), 5, "{problems:?}");
    }

    #[test]
    fn expressions_are_found_whole_and_embedded() {
        assert_eq!(
            expressions("Bearer {$response.body#/bearer}"),
            vec![("$response.body", "/bearer".to_string())]
        );
        assert_eq!(
            expressions("$request.body#/a/0"),
            vec![("$request.body", "/a/0".to_string())]
        );
        assert_eq!(
            request_headers("$request.header.x-relay-key"),
            vec!["x-relay-key"]
        );
        assert!(expressions("1").is_empty());
    }

    #[test]
    fn operation_refs_escape_the_path() {
        assert_eq!(
            operation_ref(("get", "/api/session/{id}")),
            "#/paths/~1api~1session~1{id}/get"
        );
    }

    #[test]
    fn every_link_has_a_unique_name_per_source_and_a_json_body() {
        let mut seen = std::collections::BTreeSet::new();
        for l in LINKS {
            assert!(
                seen.insert((l.from, l.name)),
                "{:?} {} twice",
                l.from,
                l.name
            );
            if let Some(body) = l.body {
                assert!(
                    body().is_object() || body().is_string(),
                    "{:?} {}",
                    l.from,
                    l.name
                );
            }
        }
    }
}
