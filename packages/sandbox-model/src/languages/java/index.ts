import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { readme, schemaFile } from '../../project-files.js';
import { commentText } from '../../request-text.js';
import { javaCliFiles } from './cli.js';
import { javaCheck, javaNames, type JavaNames } from './names.js';
import { javaServerFiles } from './server.js';

/**
 * Java 17 templates of the sandbox model (a deterministic template model,
 * not AI): the JDK alone (its built-in HTTP server for APIs), tests as
 * plain main() programs so they run without JUnit on the class path.
 * Templates are String.raw so Java's own backslash escapes stay readable.
 */
export function generateJava(spec: GenerationSpec): SandboxFile[] {
  const n = javaNames(spec);
  const files: SandboxFile[] = [recordFile(spec, n), storeFile(spec, n), jsonFile(n)];
  const main = spec.kind === 'api' ? javaServerFiles(spec, n) : spec.kind === 'cli' ? javaCliFiles(spec, n) : undefined;
  if (main) files.push(...main.files);
  if (spec.includeTests) files.push(storeTest(spec, n), ...(main ? [main.test] : []));
  const schema = schemaFile(spec);
  if (schema) files.push(schema);
  const mainClass = main ? `${n.pkg}.Main` : undefined;
  files.push(readme(spec, {
    setup: `javac -d out $(find src/main -name '*.java')`,
    run: mainClass ? `java -cp out ${mainClass}${spec.kind === 'cli' ? ` add "first ${spec.entity.words}"` : ''}` : `jshell --class-path out`,
    test: `javac -d out $(find src -name '*.java')\n${[`${n.E}StoreTest`, ...(main ? [main.test.path.split('/').pop()!.replace('.java', '')] : [])].map((c) => `java -ea -cp out ${n.pkg}.${c}`).join('\n')}`,
  }, files));
  return files;
}

function recordFile(spec: GenerationSpec, n: JavaNames): SandboxFile {
  return {
    path: `${n.dir}/${n.E}.java`, lang: 'java',
    content: String.raw`package ${n.pkg};

/** One ${spec.entity.words}. Immutable: the store replaces it on update. */
public record ${n.E}(long id, String ${n.field}, String createdAt) {
    /** This ${spec.entity.words} as a JSON object. */
    public String toJson() {
        return "{\"id\":" + id + ",\"${n.field}\":" + Json.quote(${n.field}) + ",\"createdAt\":" + Json.quote(createdAt) + "}";
    }
}
`,
  };
}

function storeFile(spec: GenerationSpec, n: JavaNames): SandboxFile {
  const where = spec.database ? ` Swap it for a ${commentText(spec.database)} repository (see db/schema.sql) behind the same methods.` : '';
  return {
    path: `${n.dir}/${n.E}Store.java`, lang: 'java',
    content: String.raw`package ${n.pkg};

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * ${spec.resource.words} in memory, in insertion order. Synchronized because the
 * HTTP server may call it from several threads.${where}
 */
public final class ${n.E}Store {
    public static final int MAX_LENGTH = 200;

    private final Map<Long, ${n.E}> items = new LinkedHashMap<>();
    private long nextId = 1;

    public ${n.E}Store() {
    }

    public ${n.E}Store(List<${n.E}> initial) {
        for (${n.E} item : initial) {
            items.put(item.id(), item);
            nextId = Math.max(nextId, item.id() + 1);
        }
    }

    /** What is wrong with a ${n.field}, or empty when it is fine. */
    public static Optional<String> problemWith(String ${n.field}) {
        if (${n.field} == null || ${n.field}.isBlank()) {
            return Optional.of("${n.field} must be a non-empty string");
        }
        if (${n.field}.length() > MAX_LENGTH) {
            return Optional.of("${n.field} must be at most " + MAX_LENGTH + " characters");
        }
        return Optional.empty();
    }

    public synchronized List<${n.E}> list() {
        return new ArrayList<>(items.values());
    }

    public synchronized Optional<${n.E}> get(long id) {
        return Optional.ofNullable(items.get(id));
    }

    public synchronized ${n.E} create(String ${n.field}) {
        ${n.E} item = new ${n.E}(nextId++, ${n.field}.strip(), Instant.now().toString());
        items.put(item.id(), item);
        return item;
    }

    public synchronized Optional<${n.E}> update(long id, String ${n.field}) {
        ${n.E} old = items.get(id);
        if (old == null) {
            return Optional.empty();
        }
        ${n.E} item = new ${n.E}(id, ${n.field}.strip(), old.createdAt());
        items.put(id, item);
        return Optional.of(item);
    }

    public synchronized boolean remove(long id) {
        return items.remove(id) != null;
    }
}
`,
  };
}

function jsonFile(n: JavaNames): SandboxFile {
  return {
    path: `${n.dir}/Json.java`, lang: 'java',
    content: String.raw`package ${n.pkg};

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Just enough JSON for this project (quoting, one string field); move to Jackson or Gson as it grows. */
public final class Json {
    private Json() {
    }

    public static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> out.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
            }
        }
        return out.append('"').toString();
    }

    public static String array(List<String> objects) {
        return "[" + String.join(",", objects) + "]";
    }

    /** The string value of a field in a flat JSON object, if it has one. */
    public static Optional<String> stringField(String body, String name) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(name) + "\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(body);
        return m.find() ? Optional.of(unescape(m.group(1))) : Optional.empty();
    }

    private static String unescape(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 >= s.length()) {
                out.append(c);
                continue;
            }
            char next = s.charAt(++i);
            switch (next) {
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    if (i + 4 < s.length()) {
                        out.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                        i += 4;
                    }
                }
                default -> out.append(next);
            }
        }
        return out.toString();
    }
}
`,
  };
}

function storeTest(spec: GenerationSpec, n: JavaNames): SandboxFile {
  return {
    path: `${n.testDir}/${n.E}StoreTest.java`, lang: 'java',
    content: String.raw`package ${n.pkg};

/** Runs without a test framework: java -cp out ${n.pkg}.${n.E}StoreTest */
public final class ${n.E}StoreTest {
${javaCheck}

    public static void main(String[] args) {
        ${n.E}Store store = new ${n.E}Store();
        ${n.E} item = store.create("  first ");
        check(item.${n.field}().equals("first"), "create strips the ${n.field}");
        check(store.get(item.id()).map(${n.E}::${n.field}).orElse("").equals("first"), "get finds it");
        check(store.update(item.id(), "renamed").map(${n.E}::${n.field}).orElse("").equals("renamed"), "update renames it");
        check(store.list().size() == 1, "list has one ${spec.entity.words}");
        check(store.create("second").id() != item.id(), "ids are unique");
        check(store.remove(item.id()), "remove succeeds once");
        check(!store.remove(item.id()), "and not twice");
        check(store.get(item.id()).isEmpty(), "a removed ${spec.entity.words} is gone");
        check(${n.E}Store.problemWith("").isPresent(), "an empty ${n.field} is refused");
        check(${n.E}Store.problemWith("x".repeat(201)).isPresent(), "a long ${n.field} is refused");
        check(${n.E}Store.problemWith("fine").isEmpty(), "a normal ${n.field} is fine");
        check(Json.stringField(item.toJson(), "${n.field}").orElse("").equals("first"), "JSON round-trips");
        check(Json.quote("a\"b\\c\n").equals("\"a\\\"b\\\\c\\n\""), "JSON quoting escapes");
        System.out.println("${n.E}StoreTest: all checks passed");
    }
}
`,
  };
}
