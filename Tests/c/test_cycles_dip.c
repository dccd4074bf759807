/* Dip's circular-dependency scenario, ported to Tether's C API.
 *
 * Dip: Client(server) through the initializer, Server.client set in
 * `resolvingProperties`, both in the shared (per-resolve) scope, and the note
 * that the back-reference must be weak (a strong one is a retain cycle) and
 * therefore reads nil once nobody holds the client. Tether: graph scope, a
 * completion callback with tether_resolver_get_weak, and the strong variant is
 * refused with TETHER_E_RETAIN_CYCLE instead of leaking. */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

typedef struct Server { tether_weak *client; } Server;
typedef struct Client { Server *server; } Client;

static struct {
    int client_made, server_made, client_dropped, server_dropped;
    int bad_release;
    Server *server_given;        /* the server Client's factory received */
    int checked_in_callback;     /* Client's completion looked at server->client */
    int alive_in_callback;       /* ... and it upgraded to the client itself */
    tether_status strong_status; /* what a strong back edge got */
    char strong_error[512];
} n;

static Client *make_client(Server *server) {
    Client *c = xcalloc(sizeof *c);
    c->server = server;
    n.server_given = server;
    n.client_made++;
    return c;
}
static Server *make_server(void) { n.server_made++; return xcalloc(sizeof(Server)); }

static void drop_client(void *instance, void *context) { (void)context; n.client_dropped++; free(instance); }
static void drop_server(void *instance, void *context) {
    (void)context;
    Server *s = instance;
    if (s->client && tether_weak_release(s->client) != TETHER_OK) n.bad_release++;
    n.server_dropped++;
    free(s);
}

/* resolvingProperties { server.client = resolve() } — weakly. */
static tether_status complete_server(tether_resolver *r, void *instance, void *context) {
    (void)context;
    Server *server = instance;
    return tether_resolver_get_weak(r, "Client", &server->client);
}

/* The tempting strong version: refused, then falls back to the weak edge. */
static tether_status complete_server_strong_first(tether_resolver *r, void *instance, void *context) {
    (void)context;
    void *client = NULL;
    n.strong_status = tether_resolver_get(r, "Client", &client);
    snprintf(n.strong_error, sizeof n.strong_error, "%s", tether_last_error());
    return complete_server(r, instance, NULL);
}

/* Runs after Server's callback: is the client reachable through the weak edge? */
static tether_status complete_client(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)context;
    Client *client = instance;
    n.checked_in_callback = 1;
    if (!client->server->client) return TETHER_OK;
    tether_ref *ref = NULL;
    if (tether_weak_upgrade(client->server->client, &ref) == TETHER_OK) {
        n.alive_in_callback = tether_ref_get(ref) == client;
        tether_ref_release(ref);
    }
    return TETHER_OK;
}

static tether_container *dip(tether_complete_fn server_callback, tether_scope client_scope) {
    memset(&n, 0, sizeof n);
    tether_container *c = NULL;
    tether_registration *rc = NULL, *rs = NULL;
    tether_param client_params[] = { TETHER_DEP("Server") };
    CHECK_OK(tether_container_new(NULL, &c));
    CHECK_OK(tether_register(c, "Client", (tether_fn)make_client, client_params, 1, &rc));
    CHECK_OK(tether_register(c, "Server", (tether_fn)make_server, NULL, 0, &rs));
    CHECK_OK(tether_set_scope(rc, client_scope));
    CHECK_OK(tether_set_scope(rs, TETHER_SCOPE_GRAPH));
    CHECK_OK(tether_set_context(rc, NULL, drop_client));
    CHECK_OK(tether_set_context(rs, NULL, drop_server));
    CHECK_OK(tether_on_complete(rs, server_callback, NULL));
    CHECK_OK(tether_on_complete(rc, complete_client, NULL));
    return c;
}

static void test_dip_client_first(void) {
    tether_container *c = dip(complete_server, TETHER_SCOPE_GRAPH);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "Client", &ref));
    Client *client = tether_ref_get(ref);
    CHECK(client && client->server && client->server->client);
    if (client && client->server && client->server->client) {
        tether_ref *back = NULL;
        CHECK_OK(tether_weak_upgrade(client->server->client, &back));
        CHECK(tether_ref_get(back) == client);      /* client === server.client */
        CHECK_OK(tether_ref_release(back));
    }
    CHECK(n.client_made == 1 && n.server_made == 1);
    CHECK(n.checked_in_callback && n.alive_in_callback);
    CHECK_OK(tether_ref_release(ref));
    CHECK(n.client_dropped == 1 && n.server_dropped == 1 && n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

/* Starting from Server: Server's callback creates the Client, which is built
 * with this very server. Nobody holds the client afterwards, so (the weak
 * note) the back-reference reads as expired once the resolve has returned. */
static void test_dip_server_first(void) {
    tether_container *c = dip(complete_server, TETHER_SCOPE_GRAPH);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "Server", &ref));
    Server *server = tether_ref_get(ref);
    CHECK(server && n.server_given == server);
    CHECK(n.client_made == 1 && n.server_made == 1);
    CHECK(n.checked_in_callback && n.alive_in_callback);
    CHECK(n.client_dropped == 1 && n.server_dropped == 0);
    CHECK(server && server->client);
    if (server && server->client) {
        tether_ref *back = NULL;
        CHECK_STATUS(tether_weak_upgrade(server->client, &back), TETHER_E_EXPIRED);
        CHECK(back == NULL);
    }
    CHECK_OK(tether_ref_release(ref));
    CHECK(n.server_dropped == 1 && n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

/* The weak note, exactly: a weak back-reference to an object nobody holds is
 * NOT expired while the resolve runs (a later completion callback can upgrade
 * it), and is expired once the resolve has returned. Weak-scoped clients too. */
static void test_dip_weak_note_expired_after_resolve_not_during(void) {
    tether_scope scopes[] = { TETHER_SCOPE_GRAPH, TETHER_SCOPE_WEAK, TETHER_SCOPE_TRANSIENT };
    for (size_t i = 0; i < sizeof scopes / sizeof scopes[0]; i++) {
        tether_container *c = dip(complete_server, scopes[i]);
        tether_ref *ref = NULL;
        CHECK_OK(tether_resolve(c, "Server", &ref));
        CHECK(n.checked_in_callback);
        CHECK(n.alive_in_callback);                  /* not expired within the resolve */
        Server *server = tether_ref_get(ref);
        CHECK(server && server->client);
        if (server && server->client) {
            tether_ref *back = NULL;
            CHECK_STATUS(tether_weak_upgrade(server->client, &back), TETHER_E_EXPIRED);
            CHECK_ERROR_HAS("the instance is gone");
        }
        CHECK(n.client_made == 1 && n.client_dropped == 1);
        CHECK_OK(tether_ref_release(ref));
        CHECK(n.server_dropped == 1 && n.bad_release == 0);
        CHECK_OK(tether_container_free(c));
    }
}

/* Server.client strong would be Client -> Server -> Client: refused, named, and
 * the weak edge suggested; the callback falls back to it and the graph works. */
static void test_dip_strong_back_reference_is_refused(void) {
    tether_container *c = dip(complete_server_strong_first, TETHER_SCOPE_GRAPH);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "Client", &ref));
    CHECK(n.strong_status == TETHER_E_RETAIN_CYCLE);
    CHECK(strstr(n.strong_error, "\"Client\" -> \"Server\" -> \"Client\"") != NULL);
    CHECK(strstr(n.strong_error, "tether_resolver_get_weak") != NULL);
    Client *client = tether_ref_get(ref);
    CHECK(client && client->server && client->server->client);
    if (client && client->server && client->server->client) {
        tether_ref *back = NULL;
        CHECK_OK(tether_weak_upgrade(client->server->client, &back));
        CHECK(tether_ref_get(back) == client);
        CHECK_OK(tether_ref_release(back));
    }
    CHECK(n.client_made == 1 && n.server_made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK(n.client_dropped == 1 && n.server_dropped == 1 && n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_dip_client_first);
    RUN(test_dip_server_first);
    RUN(test_dip_weak_note_expired_after_resolve_not_during);
    RUN(test_dip_strong_back_reference_is_refused);
    return harness_finish();
}
