import type { GenerationSpec } from '../../project-files.js';
import { javaCheck, type JavaMain, type JavaNames } from './names.js';

/** The HTTP API of the sandbox model's (deterministic, not AI) Java projects: the JDK's built-in server, tested over a real port. */

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
