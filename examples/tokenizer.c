/*
 * tokenizer.c -- a tokenizer, a parser and an evaluator that allocate from an
 * opool_heap instead of malloc.
 *
 * The language is integer arithmetic with let-bindings:
 *
 *     let width = 12 in let area = width * 5 in area / 7 + area % 7
 *
 *     expr    = "let" IDENT "=" expr "in" expr | sum
 *     sum     = product { ("+" | "-") product }
 *     product = unary { ("*" | "/" | "%") unary }
 *     unary   = "-" unary | NUMBER | IDENT | "(" expr ")"
 *
 * Everything a program needs comes from one heap (opool_heap.h), a
 * malloc-shaped allocator of size classes in 64 KiB pages (its own
 * allocator, not a set of opool pools):
 *   - the token array, grown by opool_heap_realloc as the tokenizer goes
 *     (it moves up through the size classes, and past the largest one, 32
 *     KiB, to a large block for a long program);
 *   - each identifier's text, a block of its own length;
 *   - the AST nodes, each sized to hold its identifier (a flexible array
 *     member), so nodes too come in varying sizes.
 * The tokens are freed once the parser is done, the AST once it has been
 * evaluated, and on a syntax error the parser frees what it had built.
 *
 * The program runs a list of sources, checks each result (or error message)
 * against the expected one, and then checks the heap's statistics: not one
 * block may be left live. Finally it frees a block twice on purpose: the
 * heap refuses the second free (OPOOL_ESTALE), tells the report callback
 * installed here, and stays intact: the block is not handed out twice, and
 * another program runs as before. Exit status 0 when every check passes.
 *
 *   cc -std=c11 -O2 -Iinclude examples/tokenizer.c src/opool*.c -o tokenizer
 */
#include "opool_heap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { MAX_DEPTH = 200 }; /* nesting the parser accepts: bounds its recursion */

/* ---- errors ------------------------------------------------------------------ */

/* The first error of a run; later ones (consequences) are dropped. */
struct error {
    bool set;
    char text[160];
};

static void fail(struct error *e, size_t pos, const char *fmt, ...) {
    if (e->set) return;
    e->set = true;
    int n = snprintf(e->text, sizeof e->text, "at %zu: ", pos + 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->text + n, sizeof e->text - (size_t)n, fmt, ap);
    va_end(ap);
}

/* ---- tokens ------------------------------------------------------------------ */

enum token_kind {
    T_END,
    T_NUMBER,
    T_IDENT,
    T_LET,
    T_IN,
    T_PLUS = '+',
    T_MINUS = '-',
    T_STAR = '*',
    T_SLASH = '/',
    T_PERCENT = '%',
    T_LPAREN = '(',
    T_RPAREN = ')',
    T_EQUALS = '='
};

struct token {
    enum token_kind kind;
    size_t pos;    /* offset in the source */
    int64_t value; /* T_NUMBER */
    char *text;    /* T_IDENT: a heap block of len + 1 bytes, NUL-terminated */
    size_t len;
};

struct tokens {
    struct token *items; /* a heap block, grown by opool_heap_realloc */
    size_t count, cap;
};

static void tokens_free(opool_heap *heap, struct tokens *ts) {
    for (size_t i = 0; i < ts->count; i++) opool_heap_free(heap, ts->items[i].text);
    opool_heap_free(heap, ts->items);
    *ts = (struct tokens){NULL, 0, 0};
}

static bool push(opool_heap *heap, struct tokens *ts, struct token t, struct error *e) {
    if (ts->count == ts->cap) {
        size_t cap = ts->cap ? 2 * ts->cap : 4;
        /* realloc(NULL, n) allocates; on failure the old array stays valid */
        struct token *items = opool_heap_realloc(heap, ts->items, cap * sizeof *items);
        if (items == NULL) {
            fail(e, t.pos, "out of memory");
            opool_heap_free(heap, t.text);
            return false;
        }
        ts->items = items;
        ts->cap = cap;
    }
    ts->items[ts->count++] = t;
    return true;
}

static bool is_alpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Split src into tokens, ending with T_END. False (and *e set) on a bad
 * character, a number too large or no memory; ts then holds what was read. */
static bool tokenize(opool_heap *heap, const char *src, struct tokens *ts, struct error *e) {
    size_t i = 0;
    for (;;) {
        while (src[i] == ' ' || src[i] == '\t' || src[i] == '\n') i++;
        struct token t = {T_END, i, 0, NULL, 0};
        char c = src[i];
        if (c == '\0') {
            return push(heap, ts, t, e);
        } else if (is_digit(c)) {
            t.kind = T_NUMBER;
            for (; is_digit(src[i]); i++) {
                int d = src[i] - '0';
                if (t.value > (INT64_MAX - d) / 10) {
                    fail(e, t.pos, "number too large");
                    return false;
                }
                t.value = t.value * 10 + d;
            }
        } else if (is_alpha(c)) {
            while (is_alpha(src[i]) || is_digit(src[i])) i++;
            t.len = i - t.pos;
            if (t.len == 3 && memcmp(src + t.pos, "let", 3) == 0) {
                t.kind = T_LET;
            } else if (t.len == 2 && memcmp(src + t.pos, "in", 2) == 0) {
                t.kind = T_IN;
            } else {
                t.kind = T_IDENT;
                t.text = opool_heap_alloc(heap, t.len + 1);
                if (t.text == NULL) {
                    fail(e, t.pos, "out of memory");
                    return false;
                }
                memcpy(t.text, src + t.pos, t.len);
                t.text[t.len] = '\0';
            }
        } else if (strchr("+-*/%()=", c) != NULL) {
            t.kind = (enum token_kind)c;
            i++;
        } else {
            fail(e, i, "unexpected character '%c'", c);
            return false;
        }
        if (!push(heap, ts, t, e)) return false;
    }
}

/* ---- the syntax tree ------------------------------------------------------------ */

enum node_kind { N_NUMBER, N_VAR, N_NEG, N_BINARY, N_LET };

struct node {
    enum node_kind kind;
    char op;            /* N_BINARY: '+', '-', '*', '/' or '%' */
    size_t pos;         /* where it starts in the source, for error messages */
    int64_t value;      /* N_NUMBER */
    struct node *a, *b; /* N_NEG: -a; N_BINARY: a op b; N_LET: let name = a in b */
    char name[];        /* N_VAR, N_LET: the identifier, NUL-terminated */
};

static void node_free(opool_heap *heap, struct node *n) {
    if (n == NULL) return;
    node_free(heap, n->a);
    node_free(heap, n->b);
    opool_heap_free(heap, n);
}

struct parser {
    opool_heap *heap;
    const struct token *tok; /* the next token */
    unsigned depth;
    struct error *error;
};

/* A node with room for name (NULL: none). */
static struct node *node_new(struct parser *p, enum node_kind kind, size_t pos, const char *name) {
    size_t len = name ? strlen(name) : 0;
    struct node *n = opool_heap_alloc(p->heap, offsetof(struct node, name) + len + 1);
    if (n == NULL) {
        fail(p->error, pos, "out of memory");
        return NULL;
    }
    *n = (struct node){.kind = kind, .pos = pos};
    memcpy(n->name, name ? name : "", len + 1);
    return n;
}

static const char *describe(const struct token *t) {
    switch (t->kind) {
    case T_END:
        return "the end";
    case T_NUMBER:
        return "a number";
    case T_IDENT:
        return "an identifier";
    case T_LET:
        return "'let'";
    case T_IN:
        return "'in'";
    default:
        return "an operator";
    }
}

static bool expect(struct parser *p, enum token_kind kind, const char *what) {
    if (p->tok->kind == kind) {
        p->tok++;
        return true;
    }
    fail(p->error, p->tok->pos, "expected %s, found %s", what, describe(p->tok));
    return false;
}

static struct node *parse_expr(struct parser *p);

/* Every recursion of the parser passes here: a hostile source cannot
 * exhaust the stack. Pair each true with a p->depth--. */
static bool deeper(struct parser *p) {
    if (p->depth == MAX_DEPTH) {
        fail(p->error, p->tok->pos, "nested too deeply");
        return false;
    }
    p->depth++;
    return true;
}

static struct node *parse_unary(struct parser *p) {
    const struct token *t = p->tok;
    struct node *n = NULL;
    switch (t->kind) {
    case T_MINUS:
        p->tok++;
        if (!deeper(p)) return NULL;
        if ((n = node_new(p, N_NEG, t->pos, NULL)) != NULL && (n->a = parse_unary(p)) == NULL) {
            node_free(p->heap, n);
            n = NULL;
        }
        p->depth--;
        return n;
    case T_NUMBER:
        p->tok++;
        if ((n = node_new(p, N_NUMBER, t->pos, NULL)) != NULL) n->value = t->value;
        return n;
    case T_IDENT:
        p->tok++;
        return node_new(p, N_VAR, t->pos, t->text);
    case T_LPAREN:
        p->tok++;
        n = parse_expr(p);
        if (n != NULL && !expect(p, T_RPAREN, "')'")) {
            node_free(p->heap, n);
            n = NULL;
        }
        return n;
    default:
        fail(p->error, t->pos, "expected an expression, found %s", describe(t));
        return NULL;
    }
}

/* One level of left-associative binary operators: sub { op sub }. */
static struct node *parse_binary(struct parser *p, const char *ops,
                                 struct node *(*sub)(struct parser *)) {
    struct node *left = sub(p);
    while (left != NULL && p->tok->kind != T_END && strchr(ops, (int)p->tok->kind) != NULL) {
        const struct token *t = p->tok++;
        struct node *n = node_new(p, N_BINARY, t->pos, NULL);
        struct node *right = n ? sub(p) : NULL;
        if (right == NULL) { /* give back what this level built */
            node_free(p->heap, n);
            node_free(p->heap, left);
            return NULL;
        }
        n->op = (char)t->kind;
        n->a = left;
        n->b = right;
        left = n;
    }
    return left;
}

static struct node *parse_product(struct parser *p) { return parse_binary(p, "*/%", parse_unary); }
static struct node *parse_sum(struct parser *p) { return parse_binary(p, "+-", parse_product); }

static struct node *parse_expr(struct parser *p) {
    if (!deeper(p)) return NULL;
    struct node *n;
    const struct token *t = p->tok;
    if (t->kind != T_LET) {
        n = parse_sum(p);
    } else {
        p->tok++;
        const struct token *name = p->tok;
        n = expect(p, T_IDENT, "a name") ? node_new(p, N_LET, t->pos, name->text) : NULL;
        if (n != NULL && !(expect(p, T_EQUALS, "'='") && (n->a = parse_expr(p)) != NULL &&
                           expect(p, T_IN, "'in'") && (n->b = parse_expr(p)) != NULL)) {
            node_free(p->heap, n);
            n = NULL;
        }
    }
    p->depth--;
    return n;
}

/* The whole program: one expression, then the end. */
static struct node *parse(opool_heap *heap, const struct tokens *ts, struct error *e) {
    struct parser p = {heap, ts->items, 0, e};
    struct node *n = parse_expr(&p);
    if (n != NULL && p.tok->kind != T_END) {
        fail(e, p.tok->pos, "expected an operator or the end, found %s", describe(p.tok));
        node_free(heap, n);
        n = NULL;
    }
    return n;
}

/* ---- evaluation ----------------------------------------------------------------- */

/* The bindings in force: a list on the C stack, innermost first. */
struct scope {
    const char *name;
    int64_t value;
    const struct scope *up;
};

/* a op b, false on overflow or division by zero (never undefined behaviour). */
static bool arith(char op, int64_t a, int64_t b, int64_t *out) {
    switch (op) {
    case '+':
        if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return false;
        *out = a + b;
        return true;
    case '-':
        if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b)) return false;
        *out = a - b;
        return true;
    case '*':
        if (a != 0 && b != 0 &&
            (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
                   : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b)))
            return false;
        *out = a * b;
        return true;
    default: /* '/', '%' */
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        *out = op == '/' ? a / b : a % b;
        return true;
    }
}

static bool eval(const struct node *n, const struct scope *env, int64_t *out, struct error *e) {
    int64_t a, b;
    switch (n->kind) {
    case N_NUMBER:
        *out = n->value;
        return true;
    case N_VAR:
        for (; env != NULL; env = env->up)
            if (strcmp(env->name, n->name) == 0) {
                *out = env->value;
                return true;
            }
        fail(e, n->pos, "'%.40s' is not bound", n->name);
        return false;
    case N_NEG:
        if (!eval(n->a, env, &a, e)) return false;
        if (arith('-', 0, a, out)) return true;
        fail(e, n->pos, "overflow");
        return false;
    case N_BINARY:
        if (!eval(n->a, env, &a, e) || !eval(n->b, env, &b, e)) return false;
        if (arith(n->op, a, b, out)) return true;
        fail(e, n->pos, b == 0 && (n->op == '/' || n->op == '%') ? "division by zero" : "overflow");
        return false;
    case N_LET: {
        struct scope inner = {n->name, 0, env};
        return eval(n->a, env, &inner.value, e) && eval(n->b, &inner, out, e);
    }
    }
    return false;
}

/* The tree as an s-expression; long names are cut short. */
static void print_tree(const struct node *n) {
    switch (n->kind) {
    case N_NUMBER:
        printf("%" PRId64, n->value);
        break;
    case N_VAR:
        printf("%.12s%s", n->name, strlen(n->name) > 12 ? "..." : "");
        break;
    case N_NEG:
        printf("(- ");
        print_tree(n->a);
        printf(")");
        break;
    case N_BINARY:
        printf("(%c ", n->op);
        print_tree(n->a);
        printf(" ");
        print_tree(n->b);
        printf(")");
        break;
    case N_LET:
        printf("(let %.12s%s ", n->name, strlen(n->name) > 12 ? "..." : "");
        print_tree(n->a);
        printf(" ");
        print_tree(n->b);
        printf(")");
        break;
    }
}

/* ---- running programs ------------------------------------------------------------ */

/* Tokenize, parse and evaluate src; everything it allocated is freed before
 * it returns. True with *value, or false with *e set. */
static bool run(opool_heap *heap, const char *src, int64_t *value, struct error *e, bool show) {
    struct tokens ts = {NULL, 0, 0};
    struct node *tree = NULL;
    if (tokenize(heap, src, &ts, e)) tree = parse(heap, &ts, e);
    tokens_free(heap, &ts); /* the tree holds copies of the names it needs */
    if (tree == NULL) return false;
    if (show) {
        printf("    tree:   ");
        print_tree(tree);
        printf("\n");
    }
    bool ok = eval(tree, NULL, value, e);
    node_free(heap, tree);
    return ok;
}

struct heap_log {
    unsigned reports;
    opool_status last;
    const void *last_ptr;
};

/* The heap's report callback: findings that mean a bug in the caller. */
static void on_report(opool_heap *heap, opool_status what, const void *ptr, void *user) {
    struct heap_log *log = user;
    (void)heap;
    log->reports++;
    log->last = what;
    log->last_ptr = ptr;
    printf("    heap report: %s for block %p\n", opool_status_str(what), ptr);
}

static uint64_t live_blocks(const opool_heap *heap) {
    opool_heap_stats st;
    opool_heap_get_stats(heap, &st);
    uint64_t live = st.large_live;
    for (uint32_t c = 0; c < st.class_count; c++) live += st.classes[c].live;
    return live;
}

struct test {
    const char *src;
    int64_t value;     /* expected when error is NULL */
    const char *error; /* else: expected in the error message */
};

static const struct test tests[] = {
    {"1 + 2 * 3", 7, NULL},
    {"(1 + 2) * 3", 9, NULL},
    {"10 - 4 - 3", 3, NULL},
    {"let x = 6 in let y = x * 7 in y - x", 36, NULL},
    {"let width = 12 in let height = 5 in let area = width * height in area / 7 + area % 7", 12,
     NULL},
    {"let a = 1 in (let a = a + 10 in a * 2) + a", 23, NULL},
    {"-(2 - 5) * -3", -9, NULL},
    {"let x = 1 in x +", 0, "expected an expression, found the end"},
    {"let = 4 in 2", 0, "expected a name"},
    {"(1 + 2", 0, "expected ')'"},
    {"1 2", 0, "expected an operator or the end"},
    {"let x = 5 in y", 0, "'y' is not bound"},
    {"7 / (3 - 3)", 0, "division by zero"},
    {"9223372036854775807 + 1", 0, "overflow"},
    {"99999999999999999999", 0, "number too large"},
    {"2 $ 3", 0, "unexpected character '$'"},
};

static unsigned failures;

/* Run src and check the outcome, and that it left no block behind. */
static void check_run(opool_heap *heap, const char *src, int64_t value, const char *error) {
    int64_t got = 0;
    struct error e = {false, ""};
    size_t len = strlen(src);
    const char *more = len > 60 ? "..." : "";
    printf("%.60s%s\n", src, more);
    uint64_t before = live_blocks(heap); /* the source itself may be a heap block */
    bool ok = run(heap, src, &got, &e, len <= 120);
    uint64_t leaked = live_blocks(heap) - before;
    if (ok)
        printf("    = %" PRId64 "\n", got);
    else
        printf("    error %s\n", e.text);
    if (error == NULL ? !ok || got != value : ok || strstr(e.text, error) == NULL) {
        if (error == NULL)
            fprintf(stderr, "tokenizer: FAILED: %.60s%s: expected %" PRId64 "\n", src, more, value);
        else
            fprintf(stderr, "tokenizer: FAILED: %.60s%s: expected the error \"%s\"\n", src, more,
                    error);
        failures++;
    }
    if (leaked != 0) {
        fprintf(stderr, "tokenizer: FAILED: %.60s%s: %" PRIu64 " blocks leaked\n", src, more,
                leaked);
        failures++;
    }
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "tokenizer.c:%d: check failed: %s\n", __LINE__, #cond);                \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Sources built at run time: a 40000-character name (its token and node go
 * past the largest class to large blocks), a long sum whose token array
 * grows the same way, and parentheses nested deeper than the parser
 * accepts. */
static void long_programs(opool_heap *heap) {
    enum { NAME = 40000, TERMS = 4000, NEST = MAX_DEPTH + 50 };
    char *src = opool_heap_alloc(heap, 2 * NAME + 32);
    CHECK(src != NULL);
    if (src == NULL) return;
    char *s = src;
    s += sprintf(s, "let ");
    for (int i = 0; i < NAME; i++) *s++ = (char)('a' + i % 26);
    s += sprintf(s, " = 40 in ");
    memcpy(s, src + 4, NAME);
    strcpy(s + NAME, " + 2");
    check_run(heap, src, 42, NULL);
    opool_heap_free(heap, src);

    src = opool_heap_alloc(heap, 8 * TERMS);
    CHECK(src != NULL);
    if (src == NULL) return;
    s = src;
    int64_t sum = 0;
    for (int i = 1; i <= TERMS; i++) {
        s += sprintf(s, i == 1 ? "%d" : " + %d", i);
        sum += i;
    }
    check_run(heap, src, sum, NULL);
    opool_heap_free(heap, src);

    src = opool_heap_alloc(heap, 2 * NEST + 2);
    CHECK(src != NULL);
    if (src == NULL) return;
    memset(src, '(', NEST);
    src[NEST] = '1';
    memset(src + NEST + 1, ')', NEST);
    src[2 * NEST + 1] = '\0';
    check_run(heap, src, 0, "nested too deeply");
    opool_heap_free(heap, src);
}

int main(void) {
    struct heap_log log = {0, OPOOL_OK, NULL};
    opool_heap_desc desc = {.report = on_report, .user = &log};
    opool_heap *heap;
    opool_status st = opool_heap_create(&heap, &desc);
    if (st != OPOOL_OK) {
        fprintf(stderr, "tokenizer: opool_heap_create: %s\n", opool_status_str(st));
        return 1;
    }

    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        check_run(heap, tests[i].src, tests[i].value, tests[i].error);
    long_programs(heap);

    opool_heap_stats stats;
    opool_heap_get_stats(heap, &stats);
    printf("\nclass  allocs  most live  bytes asked  lost to rounding\n");
    uint64_t allocs = 0;
    for (uint32_t c = 0; c < stats.class_count; c++) {
        const opool_heap_class_stats *k = &stats.classes[c];
        allocs += k->allocs;
        if (k->allocs == 0) continue;
        printf("%5" PRIu32 " %7" PRIu64 " %10" PRIu32 " %12" PRIu64 " %17" PRIu64 "\n", k->size,
               k->allocs, k->high_water, k->requested_bytes, k->wasted_bytes);
        CHECK(k->live == 0);
    }
    printf("live blocks after every program: %" PRIu64 " (%" PRIu64 " large)\n", live_blocks(heap),
           stats.large_live);
    CHECK(live_blocks(heap) == 0 && stats.large_live == 0 && stats.rejected == 0);
    CHECK(allocs > 0 && log.reports == 0);

    /* A double free: the second one is refused and reported, and the block
     * is not on the free list twice (malloc's classic corruption, where the
     * next two allocations would return the same block). */
    printf("\nfreeing a block twice:\n");
    char *block = opool_heap_alloc(heap, 40);
    CHECK(block != NULL);
    uintptr_t where = (uintptr_t)block;
    opool_status first = opool_heap_free(heap, block);
    opool_status second = opool_heap_free(heap, block);
    printf("    first free: %s; second free: %s\n", opool_status_str(first),
           opool_status_str(second));
    CHECK(first == OPOOL_OK && second == OPOOL_ESTALE);
    CHECK(log.reports == 1 && log.last == OPOOL_ESTALE && (uintptr_t)log.last_ptr == where);
    char *x = opool_heap_alloc(heap, 40), *y = opool_heap_alloc(heap, 40);
    CHECK(x != NULL && y != NULL && x != y);
    printf("    the next two blocks of that class: %s\n", x != y ? "distinct" : "THE SAME");
    opool_heap_free(heap, x);
    opool_heap_free(heap, y);
    check_run(heap, "let x = 2 in x * x * x", 8, NULL);
    opool_heap_get_stats(heap, &stats);
    CHECK(live_blocks(heap) == 0 && stats.rejected == 1 && log.reports == 1);

    opool_heap_destroy(heap);
    if (failures != 0) {
        fprintf(stderr, "tokenizer: %u check(s) failed\n", failures);
        return 1;
    }
    return 0;
}
