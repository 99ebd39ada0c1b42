import type { RustNames } from './gen-rust.js';
import { withArticle } from './prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from './sandbox-files.js';

/**
 * Entry points of the sandbox model's (deterministic, not AI) Rust
 * projects. The logic sits in a library module (routes or cli) that is a
 * pure function, so its #[cfg(test)] tests need no sockets or files;
 * src/main.rs only does the I/O.
 */
export interface RustMain { module: string; files: SandboxFile[] }

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

export function rustCliFiles(spec: GenerationSpec, n: RustNames): RustMain {
  const f = n.f;
  const cmd = spec.resource.kebab;
  const one = withArticle(spec.entity.words);
  const env = `${spec.resource.snake.toUpperCase()}_FILE`;
  const tests = spec.includeTests ? String.raw`

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn commands() {
        let mut store = ${n.E}Store::new();
        assert_eq!(run(&args(&["add", "buy", "milk"]), &mut store), Ok("1\tbuy milk".to_string()));
        assert_eq!(run(&args(&["add", "walk"]), &mut store), Ok("2\twalk".to_string()));
        assert_eq!(run(&args(&["list"]), &mut store), Ok("1\tbuy milk\n2\twalk".to_string()));
        assert_eq!(run(&args(&["rename", "1", "buy", "bread"]), &mut store), Ok("1\tbuy bread".to_string()));
        assert_eq!(run(&args(&["show", "1"]), &mut store), Ok("1\tbuy bread".to_string()));
        assert_eq!(run(&args(&["remove", "2"]), &mut store), Ok("removed 2".to_string()));
    }

    #[test]
    fn misuse() {
        let mut store = ${n.E}Store::new();
        for bad in [&[][..], &["bogus"], &["add"], &["show", "x"], &["remove", "9"]] {
            assert!(run(&args(bad), &mut store).is_err(), "{:?}", bad);
        }
    }
}` : '';
  return {
    module: 'cli',
    files: [{
      path: 'src/cli.rs', lang: 'rust',
      content: String.raw`//! The command line as a pure function over the store, so tests need no files.

use crate::{parse_${f}, ${n.E}, ${n.E}Store};

pub const USAGE: &str = "usage: ${cmd} <command>
  add <${f}...>            add ${one}
  list                    list every ${spec.entity.words}
  show <id>               show one ${spec.entity.words}
  rename <id> <${f}...>   change the ${f} of ${one}
  remove <id>             remove ${one}";

fn format(item: &${n.E}) -> String {
    format!("{}\t{}", item.id, item.${f})
}

/// Runs one command (arguments without the program name): what to print, or the error message.
pub fn run(args: &[String], store: &mut ${n.E}Store) -> Result<String, String> {
    let command = args.first().map(String::as_str).unwrap_or("");
    if command == "add" {
        return Ok(format(&store.create(parse_${f}(&args[1..].join(" "))?)));
    }
    if command == "list" {
        return Ok(store.list().iter().map(format).collect::<Vec<_>>().join("\n"));
    }
    if !matches!(command, "show" | "rename" | "remove") {
        return Err(USAGE.to_string());
    }
    let raw = args.get(1).map(String::as_str).unwrap_or("(missing)");
    let id = match raw.parse::<u64>() {
        Ok(id) if id > 0 => id,
        _ => return Err(format!("not an id: {raw}")),
    };
    let found = match command {
        "show" => store.get(id),
        "rename" => store.update(id, parse_${f}(&args[2..].join(" "))?),
        _ if store.remove(id) => return Ok(format!("removed {id}")),
        _ => None,
    };
    found.map(|item| format(&item)).ok_or_else(|| format!("no ${spec.entity.words} {id}"))
}${tests}
`,
    }, {
      path: 'src/main.rs', lang: 'rust',
      content: String.raw`use std::process::ExitCode;

use ${n.crate}::cli::run;
use ${n.crate}::{${n.E}, ${n.E}Store};

/// Loads the ${spec.resource.words} from a tab-separated file (${env}, default ${cmd}.tsv), runs the command, saves.
fn main() -> ExitCode {
    let path = std::env::var("${env}").unwrap_or_else(|_| "${cmd}.tsv".to_string());
    let mut store = ${n.E}Store::new();
    for line in std::fs::read_to_string(&path).unwrap_or_default().lines() {
        if let Some((id, ${f})) = line.split_once('\t') {
            if let Ok(id) = id.parse() {
                store.restore(${n.E} { id, ${f}: ${f}.to_string(), created_at: 0 });
            }
        }
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args, &mut store) {
        Ok(output) => {
            if !output.is_empty() {
                println!("{output}");
            }
            let saved: String = store.list().iter().map(|i| format!("{}\t{}\n", i.id, i.${f})).collect();
            match std::fs::write(&path, saved) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("{path}: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(2)
        }
    }
}
`,
    }],
  };
}
