import type { ProjectTemplate } from './project-template.js';

const README = `# fizzbuzz

A small Rust command-line tool with no external crates: prints FizzBuzz from
1 to a limit, with optional custom words.

## Use

\`\`\`sh
cargo run -- 15
cargo run -- 20 --fizz Foo --buzz Bar
cargo run -- --help
\`\`\`

## Develop

\`\`\`sh
cargo test        # unit tests in src/lib.rs; no network needed (no dependencies)
cargo build --release
\`\`\`

## Layout

- \`src/lib.rs\`: the logic and argument parsing, with \`#[cfg(test)]\` unit tests.
- \`src/main.rs\`: the thin binary (I/O and exit codes).
`;

const CARGO_TOML = `[package]
name = "fizzbuzz"
version = "0.1.0"
edition = "2021"
description = "FizzBuzz on the command line"

[dependencies]
`;

const LIB = `//! FizzBuzz with configurable words, and the command-line parsing for it.

#[derive(Debug, PartialEq, Eq)]
pub struct Options {
    pub limit: u32,
    pub fizz: String,
    pub buzz: String,
}

pub const USAGE: &str = "usage: fizzbuzz <limit> [--fizz WORD] [--buzz WORD]";

/// The word for one number: fizz for multiples of 3, buzz for 5, both for 15.
pub fn word(n: u32, fizz: &str, buzz: &str) -> String {
    match (n % 3, n % 5) {
        (0, 0) => format!("{fizz}{buzz}"),
        (0, _) => fizz.to_string(),
        (_, 0) => buzz.to_string(),
        _ => n.to_string(),
    }
}

/// Parses the arguments after the program name. \`Ok(None)\` means help was asked for.
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<Option<Options>, String> {
    let mut limit = None;
    let mut fizz = String::from("Fizz");
    let mut buzz = String::from("Buzz");
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--fizz" => fizz = args.next().ok_or("--fizz needs a word")?,
            "--buzz" => buzz = args.next().ok_or("--buzz needs a word")?,
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            value if limit.is_none() => {
                limit = Some(value.parse::<u32>().map_err(|_| format!("{value} is not a positive number"))?)
            }
            extra => return Err(format!("unexpected argument {extra}")),
        }
    }
    let limit = limit.ok_or("missing <limit>")?;
    Ok(Some(Options { limit, fizz, buzz }))
}

pub fn lines(options: &Options) -> impl Iterator<Item = String> + '_ {
    (1..=options.limit).map(|n| word(n, &options.fizz, &options.buzz))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn words_for_multiples() {
        assert_eq!(word(3, "Fizz", "Buzz"), "Fizz");
        assert_eq!(word(5, "Fizz", "Buzz"), "Buzz");
        assert_eq!(word(15, "Fizz", "Buzz"), "FizzBuzz");
        assert_eq!(word(7, "Fizz", "Buzz"), "7");
    }

    #[test]
    fn prints_up_to_the_limit() {
        let options = parse_args(args(&["5"])).unwrap().unwrap();
        assert_eq!(lines(&options).collect::<Vec<_>>(), ["1", "2", "Fizz", "4", "Buzz"]);
    }

    #[test]
    fn custom_words() {
        let options = parse_args(args(&["--fizz", "Foo", "15", "--buzz", "Bar"])).unwrap().unwrap();
        assert_eq!(options, Options { limit: 15, fizz: "Foo".into(), buzz: "Bar".into() });
        assert_eq!(lines(&options).last().unwrap(), "FooBar");
    }

    #[test]
    fn help_and_errors() {
        assert_eq!(parse_args(args(&["--help"])), Ok(None));
        assert!(parse_args(args(&[])).is_err());
        assert!(parse_args(args(&["ten"])).is_err());
        assert!(parse_args(args(&["-3"])).is_err());
        assert!(parse_args(args(&["3", "4"])).is_err());
        assert!(parse_args(args(&["3", "--fizz"])).is_err());
    }
}
`;

const MAIN = `use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use fizzbuzz::{lines, parse_args, USAGE};

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("fizzbuzz: {message}\\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Buffered, and a closed pipe (fizzbuzz 1000000 | head) ends quietly instead of panicking.
    let mut out = BufWriter::new(io::stdout().lock());
    for line in lines(&options) {
        if writeln!(out, "{line}").is_err() {
            return ExitCode::SUCCESS;
        }
    }
    let _ = out.flush();
    ExitCode::SUCCESS
}
`;

export const rustCli: ProjectTemplate = {
  id: 'rust-cli',
  name: 'Rust command-line tool',
  description: 'A Rust CLI (fizzbuzz with custom words) with no external crates, a library/binary split and #[cfg(test)] unit tests.',
  language: 'rust',
  files: [
    { path: '.gitignore', content: '/target\n' },
    { path: 'Cargo.toml', content: CARGO_TOML },
    { path: 'README.md', content: README },
    { path: 'src/lib.rs', content: LIB },
    { path: 'src/main.rs', content: MAIN },
  ],
};
