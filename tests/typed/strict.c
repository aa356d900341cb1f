/*
 * strict.c -- every typed function instantiated and called, compiled (not
 * run) as C11 and as C++11 under the strict warnings of the header checks
 * (cmake/OpoolHeaderCheck.cmake) as errors: a user may build with any of
 * them on, and the code OPOOL_TYPED expands in their file must stay silent.
 */
#include "opool_typed.h"
#include "opool_typed.h"

struct vec3 {
    float x, y, z;
};
typedef unsigned char byte;

OPOOL_TYPED(vec3_pool, struct vec3);
OPOOL_TYPED(byte_pool, byte);

/* handles declared before the types that hold them, pointing both ways */
OPOOL_TYPED_HANDLE(node_pool);
OPOOL_TYPED_HANDLE(edge_pool);
struct node {
    edge_pool_handle first;
    node_pool_handle parent;
};
struct edge {
    node_pool_handle from, to;
};
OPOOL_TYPED_POOL(node_pool, struct node);
OPOOL_TYPED_POOL(edge_pool, struct edge);
OPOOL_TYPED_SIDE(node_weights, node_pool, double);

static size_t sink(void *ctx, const void *data, size_t size) {
    (void)ctx;
    (void)data;
    return size;
}

static size_t source(void *ctx, void *data, size_t size) {
    (void)ctx;
    (void)data;
    (void)size;
    return 0;
}

int strict_use(void);
int strict_use(void) {
    int bad = 0;
    vec3_pool *p = NULL;
    opool_desc d = OPOOL__DESC_ZERO;
    d.capacity = 4;
    if (vec3_pool_create(&p, &d) != OPOOL_OK) return 1;
    vec3_pool_handle h = vec3_pool_handle_null();
    struct vec3 *v = vec3_pool_alloc(p, &h);
    bad += v == NULL;
    bad += vec3_pool_get(p, h) != v;
    bad += !vec3_pool_valid(p, h);
    bad += !vec3_pool_handle_eq(vec3_pool_handle_of(p, v), h);
    bad += vec3_pool_at(p, vec3_pool_handle_index(h)) != v;
    bad += vec3_pool_handle_generation(h) == 0;
    bad += vec3_pool_handle_is_null(h);
    bad += !opool_handle_eq(vec3_pool_handle_raw(h), h.raw);
    bad += !vec3_pool_handle_eq(vec3_pool_handle_from(h.raw), h);
    bad += vec3_pool_count(p) != 1 || vec3_pool_capacity(p) != 4;
    bad += !vec3_pool_handle_eq(vec3_pool_live_handle(p, 0), h);
    bad += vec3_pool_live_object(p, 0) != v;
    vec3_pool_sort(p);
    bad += vec3_pool_shrink(p) != 0;
    opool_stats st;
    vec3_pool_stats(p, &st);
    bad += st.count != 1;
    bad += opool_count(vec3_pool_raw(p)) != 1;
    bad += vec3_pool_save(p, sink, NULL) != OPOOL_OK;
    bad += vec3_pool_free(p, h) != OPOOL_OK;
    bad += vec3_pool_alloc_at(p, h) != NULL; /* h's generation is stale now */
    struct vec3 *w = vec3_pool_alloc(p, NULL);
    bad += vec3_pool_free_object(p, w) != OPOOL_OK;
    vec3_pool_clear(p);
    bad += vec3_pool_save_file(p, "") == OPOOL_OK;
    vec3_pool_destroy(p);

    vec3_pool *q = NULL;
    bad += vec3_pool_load(&q, &d, source, NULL) == OPOOL_OK;
    bad += vec3_pool_load_file(&q, &d, "") == OPOOL_OK;
    bad += vec3_pool_create_n(&q, 0) == OPOOL_OK;

    static unsigned char buf[4096];
    byte_pool *b = NULL;
    size_t need = byte_pool_required_bytes(&d);
    bad += need == 0 || need > sizeof buf;
    if (byte_pool_create_in(&b, buf, sizeof buf, &d) != OPOOL_OK) return bad + 1;
    byte *c = byte_pool_alloc(b, NULL);
    if (c != NULL) *c = 7;
    byte_pool_destroy(b);

    node_pool *nodes = NULL;
    edge_pool *edges = NULL;
    node_weights *weights = NULL;
    if (node_pool_create_flags(&nodes, 4, OPOOL_ZERO) != OPOOL_OK) return bad + 1;
    if (edge_pool_create_n(&edges, 4) != OPOOL_OK) return bad + 1;
    if (node_weights_create(&weights, 4) != OPOOL_OK) return bad + 1;
    node_pool_handle nh;
    edge_pool_handle eh;
    struct node *n = node_pool_alloc(nodes, &nh);
    struct edge *e = edge_pool_alloc(edges, &eh);
    if (n != NULL && e != NULL) {
        n->first = eh;
        n->parent = node_pool_handle_null();
        e->from = e->to = nh;
    }
    double *x = node_weights_put(weights, nh);
    if (x != NULL) *x = 1.5;
    bad += node_weights_get(weights, nh) != x;
    bad += node_weights_count(weights) != 1;
    bad += !node_pool_handle_eq(node_weights_handle_at(weights, 0), nh);
    bad += node_weights_value_at(weights, 0) != x;
    bad += opool_side_count(node_weights_raw(weights)) != 1;
    bad += node_weights_remove(weights, nh) != OPOOL_OK;
    node_weights_clear(weights);
    node_pool_get_stats(nodes, &st);
    bad += st.count != 1;
    node_weights_destroy(weights);
    edge_pool_destroy(edges);
    node_pool_destroy(nodes);
    return bad;
}
