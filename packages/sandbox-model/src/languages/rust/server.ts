import type { GenerationSpec } from '../../project-files.js';
import type { RustMain, RustNames } from './names.js';

/**
 * The HTTP API of the sandbox model's (deterministic, not AI) Rust
 * projects: routes::route() is a pure function, so its #[cfg(test)] tests
 * need no sockets; src/main.rs is a small blocking std::net server.
 */

export function rustApiFiles(spec: GenerationSpec, n: RustNames): RustMain {
  const f = n.f;
  const base = `/${spec.resource.kebab}`;
  const tests = spec.includeTests ? String.raw`

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crud() {
        let mut store = ${n.E}Store::new();
        let (status, body) = route(&mut store, "POST", "${base}", r#"{"${f}": "first"}"#);
        assert_eq!(status, 201);
        assert!(body.contains(r#""${f}":"first""#));
        assert_eq!(route(&mut store, "GET", "${base}/1", "").0, 200);
        let (status, body) = route(&mut store, "PUT", "${base}/1", r#"{"${f}": "say \"hi\""}"#);
        assert_eq!(status, 200);
        assert!(body.contains(r#""${f}":"say \"hi\"""#));
        assert!(route(&mut store, "GET", "${base}", "").1.starts_with(r#"[{"id":1"#));
        assert_eq!(route(&mut store, "DELETE", "${base}/1", "").0, 204);
        assert_eq!(route(&mut store, "GET", "${base}/1", "").0, 404);
    }

    #[test]
    fn refuses_bad_requests() {
        let mut store = ${n.E}Store::new();
        assert_eq!(route(&mut store, "POST", "${base}", r#"{"${f}": ""}"#).0, 400);
        assert_eq!(route(&mut store, "POST", "${base}", "not json").0, 400);
        assert_eq!(route(&mut store, "GET", "${base}/abc", "").0, 404);
        assert_eq!(route(&mut store, "GET", "/elsewhere", "").0, 404);
        assert_eq!(route(&mut store, "PATCH", "${base}", "").0, 405);
    }
}` : '';
  return {
    module: 'routes',
    files: [{
      path: 'src/routes.rs', lang: 'rust',
      content: String.raw`//! The ${spec.resource.words} JSON API as a pure function: (method, path, body) to (status, JSON).

use crate::{json_string, parse_${f}, ${n.E}, ${n.E}Store};

const NOT_FOUND: &str = "${spec.entity.words} not found";

pub fn route(store: &mut ${n.E}Store, method: &str, path: &str, body: &str) -> (u16, String) {
    let rest = match path.strip_prefix("${base}") {
        Some(rest) => rest,
        None => return error(404, "not found"),
    };
    if rest.is_empty() || rest == "/" {
        return match method {
            "GET" => (200, format!("[{}]", store.list().iter().map(${n.E}::to_json).collect::<Vec<_>>().join(","))),
            "POST" => match read_${f}(body) {
                Ok(${f}) => (201, store.create(${f}).to_json()),
                Err(problem) => error(400, &problem),
            },
            _ => error(405, "method not allowed"),
        };
    }
    let id = match rest.strip_prefix('/').and_then(|s| s.parse::<u64>().ok()) {
        Some(id) if id > 0 => id,
        _ => return error(404, "not found"),
    };
    let found = match method {
        "GET" => store.get(id),
        "PUT" => match read_${f}(body) {
            Ok(${f}) => store.update(id, ${f}),
            Err(problem) => return error(400, &problem),
        },
        "DELETE" => return if store.remove(id) { (204, String::new()) } else { error(404, NOT_FOUND) },
        _ => return error(405, "method not allowed"),
    };
    match found {
        Some(item) => (200, item.to_json()),
        None => error(404, NOT_FOUND),
    }
}

fn error(status: u16, message: &str) -> (u16, String) {
    (status, format!("{{\"error\":{}}}", json_string(message)))
}

/// The "${f}" string of a flat JSON object, checked by parse_${f}.
fn read_${f}(body: &str) -> Result<String, String> {
    let missing = || "expected a JSON object with a ${f}".to_string();
    let key = "\"${f}\"";
    let start = body.find(key).ok_or_else(missing)? + key.len();
    let rest = body[start..].trim_start().strip_prefix(':').ok_or_else(missing)?;
    let mut chars = rest.trim_start().strip_prefix('"').ok_or_else(missing)?.chars();
    let mut value = String::new();
    loop {
        match chars.next() {
            None => return Err(missing()),
            Some('"') => break,
            Some('\\') => match chars.next() {
                Some('n') => value.push('\n'),
                Some('t') => value.push('\t'),
                Some(c) => value.push(c),
                None => return Err(missing()),
            },
            Some(c) => value.push(c),
        }
    }
    parse_${f}(&value)
}${tests}
`,
    }, {
      path: 'src/main.rs', lang: 'rust',
      content: String.raw`use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use ${n.crate}::routes::route;
use ${n.crate}::${n.E}Store;

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Internal Server Error",
    }
}

/// A deliberately small blocking server: one request per connection, one at a time.
fn main() -> std::io::Result<()> {
    let port = std::env::var("PORT").unwrap_or_else(|_| "8080".to_string());
    let listener = TcpListener::bind(format!("127.0.0.1:{port}"))?;
    println!("listening on http://127.0.0.1:{port}${base}");
    let mut store = ${n.E}Store::new();
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).is_err() {
            continue;
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length.min(1 << 20)];
        if reader.read_exact(&mut body).is_err() {
            continue;
        }
        let (status, json) = route(&mut store, &method, &path, &String::from_utf8_lossy(&body));
        let head = format!(
            "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            reason(status),
            json.len()
        );
        let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(json.as_bytes()));
    }
    Ok(())
}
`,
    }],
  };
}
