import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { readme, schemaFile } from '../../project-files.js';
import { commentText, literal } from '../../request-text.js';
import { rustCliFiles } from './cli.js';
import type { RustNames } from './names.js';
import { rustApiFiles } from './server.js';

/**
 * Rust templates of the sandbox model (a deterministic template model, not
 * AI): the standard library only, a library crate holding the logic (with
 * #[cfg(test)] unit tests) and a thin src/main.rs; an integration test in
 * tests/ exercises the public API the way `cargo test` would.
 */
export function generateRust(spec: GenerationSpec): SandboxFile[] {
  const n: RustNames = { crate: spec.resource.snake, E: spec.entity.pascal, f: spec.field };
  const main = spec.kind === 'api' ? rustApiFiles(spec, n) : spec.kind === 'cli' ? rustCliFiles(spec, n) : undefined;
  const files: SandboxFile[] = [
    { path: 'Cargo.toml', lang: 'toml', content: `[package]\nname = "${n.crate}"\nversion = "0.1.0"\nedition = "2021"\ndescription = ${literal.toml(spec.title)}\n\n[dependencies]\n` },
    libFile(spec, n, main?.module),
    ...(main?.files ?? []),
  ];
  if (spec.includeTests) files.push(integrationTest(spec, n));
  const schema = schemaFile(spec);
  if (schema) files.push(schema);
  files.push(readme(spec, { run: main ? `cargo run${spec.kind === 'cli' ? ` -- add "first ${spec.entity.words}"` : ''}` : 'cargo build', test: 'cargo test' }, files));
  return files;
}

function libFile(spec: GenerationSpec, n: RustNames, module: string | undefined): SandboxFile {
  const f = n.f;
  const tests = spec.includeTests ? String.raw`

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_get_update_remove() {
        let mut store = ${n.E}Store::new();
        let item = store.create("first".to_string());
        assert_eq!(store.get(item.id).map(|i| i.${f}), Some("first".to_string()));
        assert_eq!(store.update(item.id, "renamed".to_string()).map(|i| i.${f}), Some("renamed".to_string()));
        assert_ne!(store.create("second".to_string()).id, item.id);
        assert_eq!(store.list().len(), 2);
        assert!(store.remove(item.id));
        assert!(!store.remove(item.id));
        assert_eq!(store.get(item.id), None);
    }

    #[test]
    fn parse_${f}_trims_and_refuses() {
        assert_eq!(parse_${f}("  spaced  "), Ok("spaced".to_string()));
        assert!(parse_${f}("").is_err());
        assert!(parse_${f}("   ").is_err());
        assert!(parse_${f}(&"x".repeat(MAX_LENGTH + 1)).is_err());
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_string("a\"b\\c\n"), r#""a\"b\\c\n""#);
    }
}` : '';
  return {
    path: 'src/lib.rs', lang: 'rust',
    content: String.raw`//! ${commentText(spec.title)}
//!
//! The ${spec.entity.words} record, input checking and an in-memory store.${spec.database ? `\n//! Swap the store for a ${commentText(spec.database)} repository (see db/schema.sql) behind the same methods.` : ''}

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};
${module ? `\npub mod ${module};\n` : ''}
pub const MAX_LENGTH: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ${n.E} {
    pub id: u64,
    pub ${f}: String,
    /// Seconds since the Unix epoch (the standard library has no calendar).
    pub created_at: u64,
}

impl ${n.E} {
    pub fn to_json(&self) -> String {
        format!("{{\"id\":{},\"${f}\":{},\"createdAt\":{}}}", self.id, json_string(&self.${f}), self.created_at)
    }
}

/// A JSON string literal (just enough JSON; reach for serde_json as the project grows).
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The trimmed ${f}, or a message saying what is wrong with it.
pub fn parse_${f}(value: &str) -> Result<String, String> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err("${f} must be a non-empty string".to_string());
    }
    if trimmed.chars().count() > MAX_LENGTH {
        return Err(format!("${f} must be at most {} characters", MAX_LENGTH));
    }
    Ok(trimmed.to_string())
}

/// ${spec.resource.words} in memory, ordered by id.
#[derive(Debug, Default)]
pub struct ${n.E}Store {
    items: BTreeMap<u64, ${n.E}>,
    last_id: u64,
}

impl ${n.E}Store {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn list(&self) -> Vec<${n.E}> {
        self.items.values().cloned().collect()
    }

    pub fn get(&self, id: u64) -> Option<${n.E}> {
        self.items.get(&id).cloned()
    }

    /// Adds ${spec.entity.words.match(/^[aeiou]/) ? 'an' : 'a'} ${spec.entity.words}; the ${f} must have passed parse_${f}.
    pub fn create(&mut self, ${f}: String) -> ${n.E} {
        self.last_id += 1;
        let item = ${n.E} { id: self.last_id, ${f}, created_at: now() };
        self.items.insert(item.id, item.clone());
        item
    }

    pub fn update(&mut self, id: u64, ${f}: String) -> Option<${n.E}> {
        let item = self.items.get_mut(&id)?;
        item.${f} = ${f};
        Some(item.clone())
    }

    pub fn remove(&mut self, id: u64) -> bool {
        self.items.remove(&id).is_some()
    }

    /// For loading saved ${spec.resource.words}: keeps the id and moves the counter past it.
    pub fn restore(&mut self, item: ${n.E}) {
        self.last_id = self.last_id.max(item.id);
        self.items.insert(item.id, item);
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}${tests}
`,
  };
}

function integrationTest(spec: GenerationSpec, n: RustNames): SandboxFile {
  const f = n.f;
  return {
    path: `tests/${n.crate}.rs`, lang: 'rust',
    content: String.raw`//! Uses only the public API, as a dependent crate would.
use ${n.crate}::{parse_${f}, ${n.E}Store};

#[test]
fn round_trip_through_the_public_api() {
    let mut store = ${n.E}Store::new();
    let ${f} = parse_${f}("  first  ").expect("a valid ${f}");
    let item = store.create(${f});
    assert_eq!(item.${f}, "first");
    assert!(item.to_json().contains("\"${f}\":\"first\""));
    assert_eq!(store.list(), vec![item.clone()]);
    assert!(store.remove(item.id));
    assert!(store.list().is_empty());
}

#[test]
fn refuses_an_empty_${f}() {
    assert!(parse_${f}("").is_err());
}
`,
  };
}
