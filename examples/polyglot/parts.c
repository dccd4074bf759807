/*
 * parts.c — the C half of the polyglot example: a small C library that registers its
 * components into a container created by Python (it receives `container.handle`).
 *
 *   Config  (C)       a plain C struct; Python's Handler depends on it.
 *   Server  (C)       depends on Logger (a C interface implemented in Python), on Handler (a
 *                     Python object: C parent, Python child) and on Config.
 *
 * Python registers Logger and Handler into the same container; Handler's completion callback
 * takes a weak back-reference to the Server, so the cycle Server -> Handler -> (weak) Server
 * crosses the language boundary. Counters let the caller check that everything is built and
 * destroyed exactly once.
 *
 * Build: cc -shared -fPIC -std=c11 -I include examples/polyglot/parts.c -o libparts.so \
 *           -L build/lib -ltether -Wl,-rpath,$PWD/build/lib
 * (link the same libtether.so file the Python process loads: tether.library_path()).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tether.h"

/* The interface Python implements: a C struct of function pointers (ctypes callbacks). */
typedef struct parts_logger {
    void (*log)(void *self, const char *line);
    int64_t (*lines)(void *self);
    void *self;
} parts_logger;

typedef struct parts_config {
    int64_t port;
    char name[32];
} parts_config;

typedef struct parts_server {
    parts_logger *logger; /* strong edges: valid as long as the server */
    void *handler;
    parts_config *config;
} parts_server;

static int configs_made, configs_dropped, servers_made, servers_dropped;

static void *make_config(void) {
    parts_config *config = calloc(1, sizeof *config);
    if (!config) return NULL;
    config->port = 8080;
    strcpy(config->name, "polyglot");
    configs_made++;
    return config;
}

static void drop_config(void *instance, void *context) {
    (void)context;
    configs_dropped++;
    free(instance);
}

static void *make_server(parts_logger *logger, void *handler, parts_config *config) {
    parts_server *server = calloc(1, sizeof *server);
    if (!server) return NULL;
    server->logger = logger;
    server->handler = handler;
    server->config = config;
    logger->log(logger->self, "server constructed"); /* C calls Python during the resolve */
    servers_made++;
    return server;
}

static void drop_server(void *instance, void *context) {
    (void)context;
    servers_dropped++;
    free(instance);
}

/* Registers Config and Server into `c` (a container made by Python), each configured
   before it becomes visible. The compiler checks the factories against their slots. */
int parts_register(tether_container *c) {
    tether_options config = TETHER_OPTIONS_INIT, server = TETHER_OPTIONS_INIT;
    config.drop = drop_config;
    server.drop = drop_server;
    tether_status st = TETHER_REGISTER0(c, "Config", &config, NULL, make_config);
    if (st != TETHER_OK) return st;
    return TETHER_REGISTER3(c, "Server", &server, NULL, make_server, TETHER_AS(TETHER_DEP("Logger"), parts_logger *),
                            TETHER_DEP("Handler"), TETHER_AS(TETHER_DEP("Config"), parts_config *));
}

void *parts_server_handler(const parts_server *s) { return s->handler; }
void *parts_server_config(const parts_server *s) { return s->config; }
void *parts_server_logger(const parts_server *s) { return s->logger; }

/* Logs through the Python-implemented interface; returns how many lines it has now. */
int64_t parts_server_log(const parts_server *s, const char *line) {
    s->logger->log(s->logger->self, line);
    return s->logger->lines(s->logger->self);
}

/* Resolves Server from C through the same container and logs through it: C drives Python. */
int parts_resolve_and_log(tether_container *c, const char *line) {
    tether_ref *keep;
    const parts_server *server = tether_get(c, "Server", &keep);
    if (!server) return tether_last_status();
    parts_server_log(server, line);
    return tether_ref_release(keep);
}

/* counters: "configs_made", "configs_dropped", "servers_made", "servers_dropped" */
int parts_count(const char *what) {
    if (!strcmp(what, "configs_made")) return configs_made;
    if (!strcmp(what, "configs_dropped")) return configs_dropped;
    if (!strcmp(what, "servers_made")) return servers_made;
    if (!strcmp(what, "servers_dropped")) return servers_dropped;
    return -1;
}
