/**
 * Shared by the sandbox model's (deterministic, not AI) C and C++ HTTP
 * servers: a deliberately small blocking POSIX socket loop (one request per
 * connection). Imports nothing language-specific.
 */

/** Socket code that compiles as both C11 and C++17: read one request, write one response. */
export function socketHelpers(): string {
  return String.raw`/* Reads the head and Content-Length body of one request into buf (NUL-terminated); -1 on failure. */
static long read_request(int fd, char *buf, size_t size) {
  size_t len = 0;
  for (;;) {
    long got = (long)recv(fd, buf + len, size - 1 - len, 0);
    if (got <= 0) return -1;
    len += (size_t)got;
    buf[len] = '\0';
    char *head_end = strstr(buf, "\r\n\r\n");
    if (head_end != NULL) {
      const char *cl = strstr(buf, "Content-Length:");
      if (cl == NULL) cl = strstr(buf, "content-length:");
      size_t want = cl != NULL && cl < head_end ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
      if (len >= (size_t)(head_end + 4 - buf) + want || len >= size - 1) return (long)len;
    } else if (len >= size - 1) {
      return -1;
    }
  }
}

static const char *reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    default: return "Internal Server Error";
  }
}

static void write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    long sent = (long)send(fd, data, len, 0);
    if (sent <= 0) return;
    data += sent;
    len -= (size_t)sent;
  }
}

static void write_response(int fd, int status, const char *body) {
  char head[256];
  size_t body_len = status == 204 ? 0 : strlen(body);
  int head_len = snprintf(head, sizeof head,
                          "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %lu\r\nConnection: close\r\n\r\n",
                          status, reason(status), (unsigned long)body_len);
  write_all(fd, head, (size_t)head_len);
  write_all(fd, body, body_len);
}

/* Listens on 127.0.0.1:port (PORT, default 8080). */
static int listen_on(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int yes = 1;
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons((unsigned short)port);
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 16) != 0) return -1;
  return fd;
}
`;
}
