import type { JavaNames } from './gen-java.js';
import { javaCheck } from './gen-java.js';
import { withArticle } from './prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from './sandbox-files.js';

/** The entry points of the sandbox model's (deterministic, not AI) Java projects: an HTTP API or a command line. */
export interface JavaMain { files: SandboxFile[]; test: SandboxFile }

export function javaServerFiles(spec: GenerationSpec, n: JavaNames): JavaMain {
  const path = `/${spec.resource.kebab}`;
  const notFound = String.raw`"{\"error\":\"${spec.entity.words} not found\"}"`;
  return {
    files: [{
      path: `${n.dir}/${n.E}Server.java`, lang: 'java',
      content: String.raw`package ${n.pkg};

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A JSON API for ${spec.resource.words} on the JDK's built-in HTTP server: no dependencies. */
public final class ${n.E}Server {
    private static final Pattern ROUTE = Pattern.compile("^${path}(?:/(\\d{1,18}))?/?$");

    private final ${n.E}Store store;

    private ${n.E}Server(${n.E}Store store) {
        this.store = store;
    }

    /** Starts a server for the store; port 0 picks a free port. */
    public static HttpServer start(${n.E}Store store, int port) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        ${n.E}Server api = new ${n.E}Server(store);
        server.createContext("/", exchange -> {
            try {
                api.handle(exchange);
            } catch (RuntimeException e) {
                send(exchange, 500, "{\"error\":\"internal error\"}");
            } finally {
                exchange.close();
            }
        });
        server.start();
        return server;
    }

    private void handle(HttpExchange exchange) throws IOException {
        Matcher route = ROUTE.matcher(exchange.getRequestURI().getPath());
        if (!route.matches()) {
            send(exchange, 404, "{\"error\":\"not found\"}");
            return;
        }
        String method = exchange.getRequestMethod();
        if (route.group(1) == null) {
            switch (method) {
                case "GET" -> send(exchange, 200, Json.array(store.list().stream().map(${n.E}::toJson).toList()));
                case "POST" -> {
                    Optional<String> ${n.field} = read${n.Field}(exchange);
                    if (${n.field}.isPresent()) {
                        send(exchange, 201, store.create(${n.field}.get()).toJson());
                    }
                }
                default -> send(exchange, 405, "{\"error\":\"method not allowed\"}");
            }
            return;
        }
        long id = Long.parseLong(route.group(1));
        switch (method) {
            case "GET" -> sendFound(exchange, store.get(id));
            case "PUT" -> {
                Optional<String> ${n.field} = read${n.Field}(exchange);
                if (${n.field}.isPresent()) {
                    sendFound(exchange, store.update(id, ${n.field}.get()));
                }
            }
            case "DELETE" -> {
                if (store.remove(id)) {
                    send(exchange, 204, null);
                } else {
                    send(exchange, 404, ${notFound});
                }
            }
            default -> send(exchange, 405, "{\"error\":\"method not allowed\"}");
        }
    }

    /** The ${n.field} from the request body, or empty after answering 400. */
    private static Optional<String> read${n.Field}(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Optional<String> ${n.field} = Json.stringField(body, "${n.field}");
        Optional<String> problem = ${n.E}Store.problemWith(${n.field}.orElse(null));
        if (problem.isPresent()) {
            send(exchange, 400, "{\"error\":" + Json.quote(problem.get()) + "}");
            return Optional.empty();
        }
        return ${n.field};
    }

    private static void sendFound(HttpExchange exchange, Optional<${n.E}> item) throws IOException {
        if (item.isPresent()) {
            send(exchange, 200, item.get().toJson());
        } else {
            send(exchange, 404, ${notFound});
        }
    }

    private static void send(HttpExchange exchange, int status, String json) throws IOException {
        if (json == null) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
`,
    }, {
      path: `${n.dir}/Main.java`, lang: 'java',
      content: String.raw`package ${n.pkg};

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;

public final class Main {
    public static void main(String[] args) throws IOException {
        int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "8080"));
        HttpServer server = ${n.E}Server.start(new ${n.E}Store(), port);
        System.out.println("listening on http://127.0.0.1:" + server.getAddress().getPort() + "${path}");
    }
}
`,
    }],
    test: {
      path: `${n.testDir}/${n.E}ServerTest.java`, lang: 'java',
      content: String.raw`package ${n.pkg};

import com.sun.net.httpserver.HttpServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Talks to a real server on a free port; runs without a test framework. */
public final class ${n.E}ServerTest {
${javaCheck}

    static HttpResponse<String> call(HttpClient client, String method, String url, String body) throws Exception {
        HttpRequest.BodyPublisher publisher = body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body);
        HttpRequest request = HttpRequest.newBuilder(URI.create(url)).method(method, publisher).header("Content-Type", "application/json").build();
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    public static void main(String[] args) throws Exception {
        HttpServer server = ${n.E}Server.start(new ${n.E}Store(), 0);
        try {
            String base = "http://127.0.0.1:" + server.getAddress().getPort() + "${path}";
            HttpClient client = HttpClient.newHttpClient();
            HttpResponse<String> created = call(client, "POST", base, "{\"${n.field}\": \"first\"}");
            check(created.statusCode() == 201, "POST answers 201");
            check(Json.stringField(created.body(), "${n.field}").orElse("").equals("first"), "POST returns the ${spec.entity.words}");
            String url = base + "/" + created.body().replaceAll("^\\{\"id\":(\\d+).*$", "$1");
            check(call(client, "GET", url, null).statusCode() == 200, "GET finds it");
            HttpResponse<String> updated = call(client, "PUT", url, "{\"${n.field}\": \"renamed\"}");
            check(Json.stringField(updated.body(), "${n.field}").orElse("").equals("renamed"), "PUT renames it");
            check(call(client, "GET", base, null).body().startsWith("[{"), "GET lists it");
            check(call(client, "DELETE", url, null).statusCode() == 204, "DELETE answers 204");
            check(call(client, "GET", url, null).statusCode() == 404, "then it is gone");
            check(call(client, "POST", base, "{\"${n.field}\": \"\"}").statusCode() == 400, "an empty ${n.field} is refused");
            System.out.println("${n.E}ServerTest: all checks passed");
        } finally {
            server.stop(0);
        }
    }
}
`,
    },
  };
}

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
