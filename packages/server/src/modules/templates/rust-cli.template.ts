import type { ProjectTemplate } from './project-template.js';

export const rustCli: ProjectTemplate = {
  id: 'rust-cli',
  name: 'Rust command-line tool',
  description: 'A Rust CLI (fizzbuzz) with no external crates and unit tests (cargo test).',
  language: 'rust',
  files: [
    { path: '.gitignore', content: '/target\n' },
    { path: 'Cargo.toml', content: '[package]\nname = "fizzbuzz"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n' },
    { path: 'README.md', content: '# fizzbuzz\n\n```sh\ncargo run -- 15\ncargo test\n```\n' },
    { path: 'src/main.rs', content: 'use std::env;\nuse std::process::ExitCode;\n\nfn fizzbuzz(n: u32) -> String {\n    match (n % 3, n % 5) {\n        (0, 0) => "FizzBuzz".to_string(),\n        (0, _) => "Fizz".to_string(),\n        (_, 0) => "Buzz".to_string(),\n        _ => n.to_string(),\n    }\n}\n\nfn main() -> ExitCode {\n    let Some(limit) = env::args().nth(1).and_then(|a| a.parse::<u32>().ok()) else {\n        eprintln!("usage: fizzbuzz <count>");\n        return ExitCode::from(2);\n    };\n    for n in 1..=limit {\n        println!("{}", fizzbuzz(n));\n    }\n    ExitCode::SUCCESS\n}\n\n#[cfg(test)]\nmod tests {\n    use super::fizzbuzz;\n\n    #[test]\n    fn words_for_multiples() {\n        assert_eq!(fizzbuzz(3), "Fizz");\n        assert_eq!(fizzbuzz(5), "Buzz");\n        assert_eq!(fizzbuzz(15), "FizzBuzz");\n        assert_eq!(fizzbuzz(7), "7");\n    }\n}\n' },
  ],
};
