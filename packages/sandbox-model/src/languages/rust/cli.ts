import { withArticle } from '../../prompt-analysis.js';
import type { GenerationSpec } from '../../project-files.js';
import type { RustMain, RustNames } from './names.js';

/** The command line of the sandbox model's (deterministic, not AI) Rust projects: cli::run() is pure, main.rs does the file. */

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
