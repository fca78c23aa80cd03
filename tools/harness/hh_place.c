/* Where each node runs, and why a node does not run on our EP: ORT's
 * per-node assignment joined with what the EP said at GetCapability. */
#include <stdlib.h>
#include <string.h>

#include "tools/harness/harness.h"

static void copy_str(char *dst, size_t cap, const char *src, size_t n) {
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

int hh_node_places(hh_ort *h, OrtSession *s, hh_node_place **out, size_t *n) {
  const OrtApi *a = h->api;
  const OrtEpAssignedSubgraph *const *sgs = NULL;
  size_t nsg = 0, total = 0, k = 0;
  *out = NULL;
  *n = 0;
  if (hh_check(h, a->Session_GetEpGraphAssignmentInfo(s, &sgs, &nsg), "Session_GetEpGraphAssignmentInfo")) return 1;
  for (size_t i = 0; i < nsg; i++) {
    const OrtEpAssignedNode *const *nodes = NULL;
    size_t nn = 0;
    if (hh_check(h, a->EpAssignedSubgraph_GetNodes(sgs[i], &nodes, &nn), "EpAssignedSubgraph_GetNodes")) return 1;
    total += nn;
  }
  hh_node_place *p = calloc(total ? total : 1, sizeof *p);
  if (!p) return hh_fail(h, "out of host memory");
  for (size_t i = 0; i < nsg; i++) {
    const char *ep = NULL;
    const OrtEpAssignedNode *const *nodes = NULL;
    size_t nn = 0;
    if (hh_check(h, a->EpAssignedSubgraph_GetEpName(sgs[i], &ep), "EpAssignedSubgraph_GetEpName") ||
        hh_check(h, a->EpAssignedSubgraph_GetNodes(sgs[i], &nodes, &nn), "EpAssignedSubgraph_GetNodes"))
      goto fail;
    for (size_t j = 0; j < nn && k < total; j++, k++) {
      const char *name = NULL, *op = NULL, *domain = NULL;
      if (hh_check(h, a->EpAssignedNode_GetName(nodes[j], &name), "EpAssignedNode_GetName") ||
          hh_check(h, a->EpAssignedNode_GetOperatorType(nodes[j], &op), "EpAssignedNode_GetOperatorType") ||
          hh_check(h, a->EpAssignedNode_GetDomain(nodes[j], &domain), "EpAssignedNode_GetDomain"))
        goto fail;
      snprintf(p[k].name, sizeof p[k].name, "%s", name ? name : "");
      snprintf(p[k].op, sizeof p[k].op, "%s", op ? op : "?");
      snprintf(p[k].domain, sizeof p[k].domain, "%s", domain ? domain : "");
      snprintf(p[k].ep, sizeof p[k].ep, "%s", ep ? ep : "?");
      p[k].subgraph = (int)i;
    }
  }
  *out = p;
  *n = k;
  return 0;
fail:
  free(p);
  return 1;
}

/* ---- the EP's log lines ------------------------------------------------------ */

/* "OP 'NAME'<rest>": op and name, and where rest starts; 0 when the line has
 * another form. A name holding "'" followed by rest's first characters
 * would be cut there: node names rarely hold quotes. */
static int split_node(const char *s, const char *rest0, char *op, size_t opcap, char *name, size_t namecap,
                      const char **rest) {
  const char *sp = strstr(s, " '");
  if (!sp || sp == s) return 0;
  const char *end = strstr(sp + 2, rest0);
  if (!end) return 0;
  copy_str(op, opcap, s, (size_t)(sp - s));
  copy_str(name, namecap, sp + 2, (size_t)(end - (sp + 2)));
  *rest = end + strlen(rest0);
  return 1;
}

static int claims_put(hh_claims *c, const hh_claim *row) {
  if (row->name[0])
    for (size_t i = 0; i < c->n; i++)
      if (strcmp(c->rows[i].name, row->name) == 0 && strcmp(c->rows[i].op, row->op) == 0) {
        c->rows[i] = *row;
        return 0;
      }
  hh_claim *r = realloc(c->rows, (c->n + 1) * sizeof *r);
  if (!r) return 1;
  c->rows = r;
  r[c->n++] = *row;
  return 0;
}

int hh_claims_parse(const char *ep_log, hh_claims *out) {
  static const char no[] = "not claiming ", yes[] = "claiming ";
  memset(out, 0, sizeof *out);
  for (const char *line = ep_log; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char buf[2048];
    copy_str(buf, sizeof buf, line, len);
    line = nl ? nl + 1 : line + len;
    hh_claim row;
    const char *rest = NULL;
    memset(&row, 0, sizeof row);
    if (strncmp(buf, no, sizeof no - 1) == 0 &&
        split_node(buf + sizeof no - 1, "': ", row.op, sizeof row.op, row.name, sizeof row.name, &rest)) {
      snprintf(row.reason, sizeof row.reason, "%s", rest);
    } else if (strncmp(buf, yes, sizeof yes - 1) == 0 &&
               split_node(buf + sizeof yes - 1, "' in partition ", row.op, sizeof row.op, row.name, sizeof row.name,
                          &rest)) {
      row.claimed = 1;
    } else {
      continue; /* other lines, "claiming ... for plan time only" among them: a final word follows */
    }
    if (claims_put(out, &row)) {
      hh_claims_free(out);
      return 1;
    }
  }
  return 0;
}

void hh_claims_free(hh_claims *c) {
  free(c->rows);
  memset(c, 0, sizeof *c);
}

/* ---- the join ------------------------------------------------------------------ */

static int offload_add(hh_offloads *o, const hh_offload *row) {
  hh_offload *r = realloc(o->rows, (o->n + 1) * sizeof *r);
  if (!r) return 1;
  o->rows = r;
  r[o->n++] = *row;
  if (row->claimed) o->n_claimed++;
  return 0;
}

int hh_offloads_make(const hh_node_place *places, size_t n, const hh_claims *c, hh_offloads *out) {
  uint8_t *used = calloc(c->n + 1, 1);
  memset(out, 0, sizeof *out);
  if (!used) return 1;
  for (size_t i = 0; i < n; i++) {
    const hh_node_place *p = &places[i];
    const hh_claim *said = NULL;
    for (size_t j = 0; j < c->n && !said; j++)
      if (!used[j] && strcmp(c->rows[j].name, p->name) == 0 && strcmp(c->rows[j].op, p->op) == 0) {
        used[j] = 1;
        said = &c->rows[j];
      }
    if (hh_is_ep_name(p->ep)) continue;
    hh_offload row;
    memset(&row, 0, sizeof row);
    snprintf(row.name, sizeof row.name, "%s", p->name);
    snprintf(row.op, sizeof row.op, "%s", p->op);
    snprintf(row.domain, sizeof row.domain, "%s", p->domain);
    snprintf(row.ep, sizeof row.ep, "%s", p->ep);
    if (!said) {
      snprintf(row.reason, sizeof row.reason,
               "the EP logged no word on it (ONNX Runtime made it after partitioning, e.g. a fusion of nodes left to "
               "%s)",
               p->ep);
    } else if (said->claimed) {
      row.claimed = 1;
      snprintf(row.reason, sizeof row.reason, "claimed by %s, but ONNX Runtime assigned it to %s", HH_EP_NAME, p->ep);
    } else {
      snprintf(row.reason, sizeof row.reason, "%s", said->reason);
    }
    if (offload_add(out, &row)) goto oom;
  }
  for (size_t j = 0; j < c->n; j++) {
    if (used[j] || c->rows[j].claimed) continue;
    hh_offload row;
    memset(&row, 0, sizeof row);
    snprintf(row.name, sizeof row.name, "%s", c->rows[j].name);
    snprintf(row.op, sizeof row.op, "%s", c->rows[j].op);
    snprintf(row.reason, sizeof row.reason, "%s", c->rows[j].reason);
    if (offload_add(out, &row)) goto oom;
  }
  free(used);
  return 0;
oom:
  free(used);
  hh_offloads_free(out);
  return 1;
}

void hh_offloads_print(const hh_offloads *o, FILE *f, const char *indent) {
  if (!indent) indent = "";
  int wn = 4, wo = 2, we = 2;
  for (size_t i = 0; i < o->n; i++) {
    const hh_offload *r = &o->rows[i];
    int ln = (int)strlen(r->name[0] ? r->name : "(unnamed)");
    int lo = (int)(strlen(r->op) + (r->domain[0] ? strlen(r->domain) + 1 : 0));
    int le = (int)strlen(r->ep[0] ? r->ep : "(gone)");
    if (ln > wn) wn = ln;
    if (lo > wo) wo = lo;
    if (le > we) we = le;
  }
  if (wn > 40) wn = 40;
  fprintf(f, "%s%-*s  %-*s  %-*s  %s\n", indent, wn, "node", wo, "op", we, "on", "why not on " HH_EP_NAME);
  for (size_t i = 0; i < o->n; i++) {
    const hh_offload *r = &o->rows[i];
    char op[160];
    snprintf(op, sizeof op, "%s%s%s", r->domain, r->domain[0] ? ":" : "", r->op);
    fprintf(f, "%s%-*s  %-*s  %-*s  %s%s\n", indent, wn, r->name[0] ? r->name : "(unnamed)", wo, op, we,
            r->ep[0] ? r->ep : "(gone)", r->reason,
            r->ep[0] ? "" : " [no longer in the graph: ONNX Runtime fused or removed it after partitioning]");
  }
}

void hh_offloads_free(hh_offloads *o) {
  free(o->rows);
  memset(o, 0, sizeof *o);
}
