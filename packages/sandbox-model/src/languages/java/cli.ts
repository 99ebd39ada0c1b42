import { withArticle } from '../../prompt-analysis.js';
import type { GenerationSpec } from '../../project-files.js';
import { javaCheck, type JavaMain, type JavaNames } from './names.js';

/** The command line of the sandbox model's (deterministic, not AI) Java projects: Main.run() is pure, main() does the file. */

export function javaCliFiles(spec: GenerationSpec, n: JavaNames): JavaMain {
  const cmd = spec.resource.kebab;
  const one = withArticle(spec.entity.words);
  const env = `${spec.resource.snake.toUpperCase()}_FILE`;
  return {
    files: [{
      path: `${n.dir}/Main.java`, lang: 'java',
      content: String.raw`package ${n.pkg};

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/** Command line for ${spec.resource.words}: add, list, show, rename, remove; kept in a tab-separated file. */
public final class Main {
    static final String USAGE = """
        usage: ${cmd} <command>
          add <${n.field}...>            add ${one}
          list                    list every ${spec.entity.words}
          show <id>               show one ${spec.entity.words}
          rename <id> <${n.field}...>   change the ${n.field} of ${one}
          remove <id>             remove ${one}""";

    /** Misuse of the command line: main() prints it and exits with status 2. */
    static final class UsageError extends Exception {
        private static final long serialVersionUID = 1L;

        UsageError(String message) {
            super(message);
        }
    }

    static String format(${n.E} item) {
        return item.id() + "\t" + item.${n.field}();
    }

    /** Runs one command and returns what to print; pure apart from the store, so tests need no files. */
    static String run(List<String> args, ${n.E}Store store) throws UsageError {
        String command = args.isEmpty() ? "" : args.get(0);
        List<String> rest = args.isEmpty() ? List.of() : args.subList(1, args.size());
        switch (command) {
            case "add":
                return format(store.create(${n.field}(rest)));
            case "list":
                return store.list().stream().map(Main::format).collect(Collectors.joining("\n"));
            case "show":
                return format(store.get(id(rest)).orElseThrow(() -> new UsageError("no ${spec.entity.words} " + rest.get(0))));
            case "rename":
                return format(store.update(id(rest), ${n.field}(rest.subList(1, rest.size()))).orElseThrow(() -> new UsageError("no ${spec.entity.words} " + rest.get(0))));
            case "remove":
                if (!store.remove(id(rest))) {
                    throw new UsageError("no ${spec.entity.words} " + rest.get(0));
                }
                return "removed " + rest.get(0);
            default:
                throw new UsageError(USAGE);
        }
    }

    private static long id(List<String> rest) throws UsageError {
        if (rest.isEmpty() || !rest.get(0).matches("[1-9]\\d{0,17}")) {
            throw new UsageError("not an id: " + (rest.isEmpty() ? "(missing)" : rest.get(0)));
        }
        return Long.parseLong(rest.get(0));
    }

    private static String ${n.field}(List<String> words) throws UsageError {
        String value = String.join(" ", words).replaceAll("[\\t\\r\\n]", " ");
        var problem = ${n.E}Store.problemWith(value);
        if (problem.isPresent()) {
            throw new UsageError(problem.get());
        }
        return value;
    }

    public static void main(String[] args) throws IOException {
        Path file = Path.of(System.getenv().getOrDefault("${env}", "${cmd}.tsv"));
        List<${n.E}> initial = new ArrayList<>();
        if (Files.exists(file)) {
            for (String line : Files.readAllLines(file)) {
                String[] parts = line.split("\t", 3);
                if (parts.length == 3) {
                    initial.add(new ${n.E}(Long.parseLong(parts[0]), parts[2], parts[1]));
                }
            }
        }
        ${n.E}Store store = new ${n.E}Store(initial);
        try {
            String output = run(Arrays.asList(args), store);
            if (!output.isEmpty()) {
                System.out.println(output);
            }
        } catch (UsageError e) {
            System.err.println(e.getMessage());
            System.exit(2);
        }
        List<String> lines = store.list().stream().map(i -> i.id() + "\t" + i.createdAt() + "\t" + i.${n.field}()).toList();
        Files.write(file, lines);
    }
}
`,
    }],
    test: {
      path: `${n.testDir}/MainTest.java`, lang: 'java',
      content: String.raw`package ${n.pkg};

import java.util.List;

/** Exercises the command line through Main.run(); runs without a test framework. */
public final class MainTest {
${javaCheck}

    static boolean fails(List<String> args, ${n.E}Store store) {
        try {
            Main.run(args, store);
            return false;
        } catch (Main.UsageError e) {
            return true;
        }
    }

    public static void main(String[] args) throws Exception {
        ${n.E}Store store = new ${n.E}Store();
        check(Main.run(List.of("add", "buy", "milk"), store).equals("1\tbuy milk"), "add");
        check(Main.run(List.of("add", "walk"), store).equals("2\twalk"), "add again");
        check(Main.run(List.of("list"), store).equals("1\tbuy milk\n2\twalk"), "list");
        check(Main.run(List.of("rename", "1", "buy", "bread"), store).equals("1\tbuy bread"), "rename");
        check(Main.run(List.of("show", "1"), store).equals("1\tbuy bread"), "show");
        check(Main.run(List.of("remove", "2"), store).equals("removed 2"), "remove");
        for (List<String> bad : List.of(List.<String>of(), List.of("bogus"), List.of("add"), List.of("show", "x"), List.of("remove", "9"))) {
            check(fails(bad, store), "refuses " + bad);
        }
        System.out.println("MainTest: all checks passed");
    }
}
`,
    },
  };
}
