/* tether_validate and tether_export_dot: the declared graph checked and drawn
 * without running a single factory. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"

static int made;
static void *make0(void) { made++; return malloc(1); }
static void *make1(void *a) { (void)a; made++; return malloc(1); }
static void *make2(void *a, void *b) { (void)a; (void)b; made++; return malloc(1); }

static tether_registration *add(tether_container *c, const char *key, const tether_param *p, size_t n) {
    static const tether_fn factories[] = { (tether_fn)make0, (tether_fn)make1, (tether_fn)make2 };
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, key, factories[n], p, n, &r));
    return r;
}

/* A new root, the factory count reset: these tests read declarations only, and end with
 * free_none_made, which checks that no factory ran. */
static tether_container *fresh_root(void) {
    tether_container *c = NULL;
    made = 0;
    CHECK_OK(tether_container_new(NULL, &c));
    return c;
}
static void free_none_made(tether_container *c) {
    CHECK(made == 0);
    CHECK_OK(tether_container_free(c));
}

/* The line of `text` that contains `needle` (copied into buf), or "" if none. */
static const char *line_with(const char *text, const char *needle, char *buf, size_t size) {
    const char *hit = strstr(text, needle);
    buf[0] = '\0';
    if (!hit) return buf;
    const char *start = hit, *end = hit;
    while (start > text && start[-1] != '\n') start--;
    while (*end && *end != '\n') end++;
    size_t len = (size_t)(end - start) < size - 1 ? (size_t)(end - start) : size - 1;
    memcpy(buf, start, len);
    buf[len] = '\0';
    return buf;
}

static void check_line(const char *report, const char *needle, const char *also) {
    char line[1024];
    line_with(report, needle, line, sizeof line);
    if (!line[0] || !strstr(line, also)) {
        fprintf(stderr, "  no line with %s and %s in:\n%s\n", needle, also, report);
        CHECK(0);
    }
}

/* ---- tether_validate ------------------------------------------------------- */

static void test_validate_ok_graph(void) {
    tether_param a[] = { TETHER_DEP("B"), TETHER_WEAK("C") };
    tether_param b[] = { TETHER_DEP("C") };
    tether_container *c = fresh_root();
    add(c, "A", a, 2);
    add(c, "B", b, 1);
    add(c, "C", NULL, 0);
    CHECK_OK(tether_validate(c));
    free_none_made(c);
}

static void test_validate_reports_every_missing_key(void) {
    tether_param service[] = { TETHER_DEP("Repository"), TETHER_DEP("Clock") };
    tether_param repository[] = { TETHER_DEP("Logger"), TETHER_WEAK("Metrics") };
    tether_param worker[] = { TETHER_LAZY("Queue") };
    tether_container *c = fresh_root();
    add(c, "Service", service, 2);
    add(c, "Repository", repository, 2);
    add(c, "Worker", worker, 1);
    CHECK_STATUS(tether_validate(c), TETHER_E_NOT_FOUND);
    char report[8192];
    snprintf(report, sizeof report, "%s", tether_last_error());
    check_line(report, "no registration for \"Clock\"", "\"Service\"");
    check_line(report, "no registration for \"Logger\"", "\"Repository\"");
    check_line(report, "no registration for \"Metrics\"", "\"Repository\"");
    check_line(report, "no registration for \"Queue\"", "\"Worker\"");   /* lazy keys must exist too */
    free_none_made(c);
}

static void test_validate_reports_constructor_cycles(void) {
    tether_param parent[] = { TETHER_DEP("Child") };
    tether_param child[] = { TETHER_DEP("Parent") };
    tether_param self[] = { TETHER_DEP("Self") };
    tether_param x[] = { TETHER_DEP("Y") };
    tether_param y[] = { TETHER_WEAK("X") };       /* a weak slot is a constructor edge too */
    tether_container *c = fresh_root();
    add(c, "Parent", parent, 1);
    add(c, "Child", child, 1);
    add(c, "Self", self, 1);
    add(c, "X", x, 1);
    add(c, "Y", y, 1);
    CHECK_STATUS(tether_validate(c), TETHER_E_CYCLE);
    const char *report = tether_last_error();
    CHECK(strstr(report, "\"Parent\" -> \"Child\" -> \"Parent\"") ||
          strstr(report, "\"Child\" -> \"Parent\" -> \"Child\""));
    CHECK_ERROR_HAS("\"Self\" -> \"Self\"");
    CHECK(strstr(report, "\"X\" -> \"Y\" -> \"X\"") || strstr(report, "\"Y\" -> \"X\" -> \"Y\""));
    CHECK(made == 0);

    /* Missing keys win over cycles, and both are reported. */
    tether_param needs_missing[] = { TETHER_DEP("Nowhere") };
    add(c, "Lonely", needs_missing, 1);
    CHECK_STATUS(tether_validate(c), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"Nowhere\"");
    CHECK_ERROR_HAS("\"Self\" -> \"Self\"");
    free_none_made(c);
}

/* Lazy edges are not constructor cycles; a weak-lazy back edge is sound, a strong lazy one
 * closes a retain cycle (its call would be refused) and validate says so, naming the fix. */
static void test_validate_lazy_edges_are_not_cycles(void) {
    tether_param p[] = { TETHER_LAZY("C") };
    tether_param cc[] = { TETHER_DEP("P") };
    tether_param q[] = { TETHER_WEAK_LAZY("D") };
    tether_param d[] = { TETHER_DEP("Q") };
    tether_container *c = fresh_root();
    add(c, "Q", q, 1);
    add(c, "D", d, 1);
    CHECK_OK(tether_validate(c));
    add(c, "P", p, 1);
    add(c, "C", cc, 1);
    CHECK_STATUS(tether_validate(c), TETHER_E_RETAIN_CYCLE);
    CHECK_ERROR_HAS("lazy dependency \"P\" -> \"C\" would close a retain cycle \"P\" -> \"C\" -> \"P\"");
    CHECK_ERROR_HAS("TETHER_WEAK_LAZY(\"C\")");
    CHECK(strstr(tether_last_error(), "cycle through constructors") == NULL);
    tether_param weak_p[] = { TETHER_WEAK_LAZY("C") };
    add(c, "P", weak_p, 1);              /* the fix applied */
    CHECK_OK(tether_validate(c));
    free_none_made(c);
}

static void test_validate_sees_parent_registrations(void) {
    tether_container *parent = NULL, *child = NULL;
    tether_param needs_logger[] = { TETHER_DEP("Logger") };
    made = 0;
    CHECK_OK(tether_container_new(NULL, &parent));
    CHECK_OK(tether_container_new(parent, &child));
    add(parent, "Logger", NULL, 0);
    add(child, "Service", needs_logger, 1);
    CHECK_OK(tether_validate(child));
    CHECK(made == 0);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(parent));
}

/* ---- tether_export_dot ------------------------------------------------------ */

/* Copies the line at *at into buf (leaving out the characters in `skip`) and moves *at past it; 0 at the end. */
static int next_line(const char **at, char *buf, size_t size, const char *skip) {
    const char *line = *at;
    if (!*line) return 0;
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line), j = 0;
    for (size_t i = 0; i < len && j < size - 1; i++)
        if (!strchr(skip, line[i])) buf[j++] = line[i];
    buf[j] = '\0';
    *at = line + len + (end ? 1 : 0);
    return 1;
}

/* Edge lines of the DOT ("->"), with spaces and quotes removed. */
static int count_edge_lines_with(const char *dot, const char *attribute) {
    int count = 0;
    char buf[1024];
    while (next_line(&dot, buf, sizeof buf, " \""))
        if (strstr(buf, "->") && strstr(buf, attribute)) count++;
    return count;
}

/* A node line (no "->") mentioning `key`, lower-cased, contains `word`. */
static int node_line_has(const char *dot, const char *key, const char *word) {
    char buf[1024];
    while (next_line(&dot, buf, sizeof buf, "")) {
        if (!strstr(buf, "->") && strstr(buf, key)) {
            for (char *ch = buf; *ch; ch++) *ch = (char)tolower((unsigned char)*ch);
            if (strstr(buf, word)) return 1;
        }
    }
    return 0;
}

static void render_with_graphviz(const char *dot) {
    if (system("command -v dot >/dev/null 2>&1") != 0) {
        printf("SKIP dot -Tsvg check: graphviz is not installed (apt-get install graphviz)\n");
        return;
    }
    char path[] = "/tmp/tether-dot-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    FILE *f = fdopen(fd, "w");
    CHECK(f != NULL);
    if (!f) { close(fd); unlink(path); return; }
    fputs(dot, f);
    fclose(f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "dot -Tsvg %s -o /dev/null", path);
    CHECK(system(cmd) == 0);
    unlink(path);
}

/* The DOT of `c` (checked: OK and not NULL). */
static char *dot_of(tether_container *c) {
    char *dot = NULL;
    CHECK_OK(tether_export_dot(c, &dot));
    CHECK(dot != NULL);
    return dot;
}

/* After a DOT's checks: graphviz renders it, it is printed when the test failed, it is freed. */
static void drawn(char *dot) {
    if (dot) {
        render_with_graphviz(dot);
        if (harness_current_failed) fprintf(stderr, "%s\n", dot);
    }
    tether_string_free(dot);
}

static void test_export_dot_styles(void) {
    tether_param service[] = { TETHER_DEP("Repository"), TETHER_WEAK("Session") };
    tether_param repository[] = { TETHER_DEP("Cache") };
    tether_param worker[] = { TETHER_LAZY("Service") };
    tether_container *c = fresh_root();
    add(c, "Service", service, 2);
    add(c, "Repository", repository, 1);
    CHECK_OK(tether_set_scope(add(c, "Cache", NULL, 0), TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_set_scope(add(c, "Session", NULL, 0), TETHER_SCOPE_WEAK));
    CHECK_OK(tether_set_scope(add(c, "Worker", worker, 1), TETHER_SCOPE_TRANSIENT));

    char *dot = dot_of(c);
    if (dot) {
        CHECK(strstr(dot, "digraph") != NULL);
        CHECK(node_line_has(dot, "Service", "graph"));
        CHECK(node_line_has(dot, "Repository", "graph"));
        CHECK(node_line_has(dot, "Cache", "singleton"));
        CHECK(node_line_has(dot, "Session", "weak"));
        CHECK(node_line_has(dot, "Worker", "transient"));
        CHECK(count_edge_lines_with(dot, "->") >= 4);
        CHECK(count_edge_lines_with(dot, "style=dashed") == 1);   /* Service -> Session */
        CHECK(count_edge_lines_with(dot, "style=dotted") == 1);   /* Worker -> Service */
        CHECK(count_edge_lines_with(dot, "color=red") == 0);      /* no cycle here */
    }
    drawn(dot);
    tether_string_free(NULL);
    free_none_made(c);
}

static void test_export_dot_highlights_cycles(void) {
    tether_param parent[] = { TETHER_DEP("Child") };
    tether_param child[] = { TETHER_DEP("Parent") };
    tether_param p[] = { TETHER_LAZY("Q") };
    tether_param q[] = { TETHER_WEAK_LAZY("P") };
    tether_container *c = fresh_root();
    add(c, "Parent", parent, 1);
    add(c, "Child", child, 1);
    add(c, "P", p, 1);
    add(c, "Q", q, 1);
    char *dot = dot_of(c);
    if (dot) {
        CHECK(count_edge_lines_with(dot, "color=red") == 2);      /* Parent -> Child -> Parent */
        CHECK(count_edge_lines_with(dot, "style=dotted") == 2);   /* lazy and weak-lazy: no cycle */
    }
    drawn(dot);
    free_none_made(c);
}

static void test_export_dot_shows_missing_keys(void) {
    tether_param service[] = { TETHER_DEP("Missing") };
    tether_container *c = fresh_root();
    add(c, "Service", service, 1);
    char *dot = dot_of(c);
    if (dot) {
        CHECK(node_line_has(dot, "Missing", "red"));
        CHECK(node_line_has(dot, "Missing", "dashed"));
        CHECK(count_edge_lines_with(dot, "->") == 1);
    }
    drawn(dot);
    free_none_made(c);
}

static void test_validate_and_dot_bad_handles(void) {
    char *dot = (char *)"untouched";
    CHECK_STATUS(tether_validate(NULL), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_export_dot(NULL, &dot), TETHER_E_INVALID_HANDLE);
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    CHECK_STATUS(tether_export_dot(c, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_validate(c));                                 /* empty is fine */
    CHECK_OK(tether_container_free(c));
    CHECK_STATUS(tether_validate(c), TETHER_E_INVALID_HANDLE);
}

/* ---- declared completion targets (tether_on_complete_params) ---------------- */

static tether_status complete_noop(void *instance, void *const *args, size_t n, void *context) {
    (void)instance; (void)context;
    for (size_t i = 0; i < n; i++) (void)args[i];
    return TETHER_OK;
}
static int64_t last_arg;
static void *make_with_arg(int64_t n) { last_arg = n; made++; return malloc(1); }
static void drop_free(void *instance, void *context) { (void)context; free(instance); }

/* Adds a completion callback declaring `n` targets to `r`. */
static void declare(tether_registration *r, const tether_param *targets, size_t n) {
    CHECK_OK(tether_on_complete_params(r, complete_noop, targets, n, NULL));
}

/* Each problem a declared target makes: validate reports it (without running a
 * factory) with the status the resolve then fails with. */
static void test_validate_sees_declared_completion_targets(void) {
    struct { const char *name; tether_status status; const char *fragment; const char *also; } cases[] = {
        {"missing target", TETHER_E_NOT_FOUND, "no registration for \"Gone\"", "\"A\" (completion callback #1)"},
        {"retain cycle", TETHER_E_RETAIN_CYCLE, "retain cycle \"B\" -> \"A\" -> \"B\"", "declare that target TETHER_PARAM_WEAK"},
        {"arguments", TETHER_E_ARGUMENT_MISMATCH, "\"Args\" takes runtime arguments and cannot be a dependency",
         "(needed by \"A\" (completion callback #1))"},
    };
    for (int i = 0; i < 3; i++) {
        tether_container *c = NULL;
        CHECK_OK(tether_container_new(NULL, &c));
        made = 0;
        tether_param a_deps[] = { TETHER_DEP("B") };
        tether_registration *a = add(c, "A", i == 1 ? a_deps : NULL, i == 1 ? 1 : 0);
        CHECK_OK(tether_set_context(a, NULL, drop_free));
        tether_registration *b = add(c, "B", NULL, 0);
        CHECK_OK(tether_set_context(b, NULL, drop_free));
        tether_param arg[] = { TETHER_I64 };
        tether_registration *args = NULL;
        CHECK_OK(tether_register(c, "Args", (tether_fn)make_with_arg, arg, 1, &args));
        CHECK_OK(tether_set_context(args, NULL, drop_free));
        tether_param gone[] = { TETHER_DEP("Gone") }, back[] = { TETHER_DEP("A") }, needs_args[] = { TETHER_WEAK("Args") };
        if (i == 0) declare(a, gone, 1);
        if (i == 1) declare(b, back, 1);
        if (i == 2) declare(a, needs_args, 1);
        CHECK_STATUS(tether_validate(c), cases[i].status);
        check_line(tether_last_error(), cases[i].fragment, cases[i].also);
        CHECK(made == 0);
        if (harness_current_failed) fprintf(stderr, "  case: %s\n", cases[i].name);
        /* The resolve fails the same way. */
        tether_ref *ref = NULL;
        CHECK_STATUS(tether_resolve(c, "A", &ref), cases[i].status);
        CHECK_OK(tether_container_free(c));
    }
}

/* Declaring the back edge weak is what the report says to do: then all is well. */
static void test_validate_declared_weak_back_edge_is_fine(void) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param a_deps[] = { TETHER_DEP("B") }, back[] = { TETHER_WEAK("A") };
    add(c, "A", a_deps, 1);
    declare(add(c, "B", NULL, 0), back, 1);
    CHECK_OK(tether_validate(c));
    CHECK_OK(tether_container_free(c));
}

/* DOT draws declared targets from registration on: DEP solid, WEAK dashed,
 * the retain cycle a DEP target closes in red. */
static void test_export_dot_draws_declared_targets(void) {
    tether_container *c = fresh_root();
    tether_param a_deps[] = { TETHER_DEP("B") }, targets[] = { TETHER_DEP("C"), TETHER_WEAK("D") }, back[] = { TETHER_DEP("A") };
    add(c, "A", a_deps, 1);
    tether_registration *b = add(c, "B", NULL, 0);
    add(c, "C", NULL, 0);
    add(c, "D", NULL, 0);
    declare(b, targets, 2);
    char *dot = dot_of(c);
    if (dot) {
        CHECK(count_edge_lines_with(dot, "B->C[label=completion]") == 1);
        CHECK(count_edge_lines_with(dot, "B->D[style=dashed,label=completion]") == 1);
        CHECK(count_edge_lines_with(dot, "color=red") == 0);
    }
    drawn(dot);
    declare(b, back, 1);
    dot = dot_of(c);
    if (dot) {
        CHECK(count_edge_lines_with(dot, "A->B[color=red") == 1);
        CHECK(count_edge_lines_with(dot, "B->A[label=completion,color=red") == 1);
    }
    drawn(dot);
    free_none_made(c);
}

/* A singleton's dependencies come from its own container, whoever resolves it:
 * validate through a child that registers the dependency still reports it
 * missing for the parent's singleton, as the resolve through the child fails. */
static void test_validate_looks_up_a_singletons_dependencies_in_its_container(void) {
    tether_container *parent = NULL, *child = NULL;
    CHECK_OK(tether_container_new(NULL, &parent));
    CHECK_OK(tether_container_new(parent, &child));
    made = 0;
    tether_param log[] = { TETHER_DEP("Log") };
    CHECK_OK(tether_set_scope(add(parent, "S", log, 1), TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_set_context(add(child, "Log", NULL, 0), NULL, drop_free));
    CHECK_STATUS(tether_validate(child), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"Log\" (needed by \"S\")");
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(child, "S", &ref), TETHER_E_NOT_FOUND);
    CHECK(made == 0);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(parent));
}

int main(void) {
    RUN(test_validate_ok_graph);
    RUN(test_validate_reports_every_missing_key);
    RUN(test_validate_reports_constructor_cycles);
    RUN(test_validate_lazy_edges_are_not_cycles);
    RUN(test_validate_sees_parent_registrations);
    RUN(test_export_dot_styles);
    RUN(test_export_dot_highlights_cycles);
    RUN(test_export_dot_shows_missing_keys);
    RUN(test_validate_and_dot_bad_handles);
    RUN(test_validate_sees_declared_completion_targets);
    RUN(test_validate_declared_weak_back_edge_is_fine);
    RUN(test_export_dot_draws_declared_targets);
    RUN(test_validate_looks_up_a_singletons_dependencies_in_its_container);
    return harness_finish();
}
