/*
 * nl-patch.c: LD_PRELOAD shim used ONLY to record bond fixtures on a machine whose kernel
 * has no bonding module. It wraps recvmsg() on rtnetlink sockets and, for RTM_NEWLINK
 * messages whose IFLA_IFNAME matches a record in $NL_PATCH_FILE, rewrites the message:
 * ifi_flags |= set, &= ~clear, drops the attribute types in strip_mask, then appends a
 * prebuilt attribute blob (e.g. IFLA_LINKINFO {kind "bond", data {...}} or IFLA_MASTER).
 * Everything else (the real veths' other attributes, the dump framing) comes from the
 * kernel, and the JSON is printed by the unmodified /usr/sbin/ip binary, so the output
 * carries iproute2's real formatting. See test/tools/network/record-fixtures.ts.
 *
 * Record format (little endian): char ifname[16]; u32 set; u32 clear; u64 strip_mask;
 * u32 blob_len; u8 blob[blob_len] (blob_len a multiple of 4).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

struct rec { char name[16]; uint32_t set, clear; uint64_t strip; uint32_t blen; unsigned char *blob; };
static struct rec recs[16];
static int nrecs = -1;
static unsigned char pending[1 << 20];
static ssize_t pending_len = -1;
static struct sockaddr_nl pending_addr;

static void load(void) {
  if (nrecs >= 0) return;
  nrecs = 0;
  const char *p = getenv("NL_PATCH_FILE");
  if (!p) return;
  FILE *f = fopen(p, "rb");
  if (!f) { perror("nl-patch"); exit(99); }
  while (nrecs < 16) {
    struct rec *r = &recs[nrecs];
    if (fread(r->name, 1, 16, f) != 16) break;
    if (fread(&r->set, 4, 1, f) != 1 || fread(&r->clear, 4, 1, f) != 1 ||
        fread(&r->strip, 8, 1, f) != 1 || fread(&r->blen, 4, 1, f) != 1) { fprintf(stderr, "nl-patch: bad file\n"); exit(99); }
    r->blob = malloc(r->blen);
    if (fread(r->blob, 1, r->blen, f) != r->blen) { fprintf(stderr, "nl-patch: short blob\n"); exit(99); }
    nrecs++;
  }
  fclose(f);
}

static struct rec *match(struct nlmsghdr *h) {
  if (h->nlmsg_type != RTM_NEWLINK) return NULL;
  int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(struct ifinfomsg));
  struct rtattr *a = IFLA_RTA(NLMSG_DATA(h));
  for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
    if (a->rta_type == IFLA_IFNAME)
      for (int i = 0; i < nrecs; i++)
        if (strcmp((char *)RTA_DATA(a), recs[i].name) == 0) return &recs[i];
  return NULL;
}

/* rewrite src[0..n) into pending */
static void transform(unsigned char *src, ssize_t n) {
  ssize_t out = 0;
  int rem = (int)n;
  for (struct nlmsghdr *h = (struct nlmsghdr *)src; NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
    struct rec *r = match(h);
    struct nlmsghdr *o = (struct nlmsghdr *)(pending + out);
    if (!r) { memcpy(o, h, NLMSG_ALIGN(h->nlmsg_len)); out += NLMSG_ALIGN(h->nlmsg_len); continue; }
    size_t hdr = NLMSG_LENGTH(sizeof(struct ifinfomsg));
    memcpy(o, h, hdr);
    struct ifinfomsg *ifi = NLMSG_DATA(o);
    ifi->ifi_flags = (ifi->ifi_flags | r->set) & ~r->clear;
    size_t pos = hdr;
    int len = h->nlmsg_len - hdr;
    for (struct rtattr *a = IFLA_RTA(NLMSG_DATA(h)); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
      unsigned t = a->rta_type & NLA_TYPE_MASK;
      if (t < 64 && (r->strip >> t) & 1) continue;
      memcpy((unsigned char *)o + pos, a, RTA_ALIGN(a->rta_len));
      pos += RTA_ALIGN(a->rta_len);
    }
    memcpy((unsigned char *)o + pos, r->blob, r->blen);
    pos += r->blen;
    o->nlmsg_len = pos;
    out += NLMSG_ALIGN(pos);
  }
  pending_len = out;
}

static int is_netlink(int fd) {
  struct sockaddr_storage ss; socklen_t l = sizeof ss;
  return getsockname(fd, (struct sockaddr *)&ss, &l) == 0 && ss.ss_family == AF_NETLINK;
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
  static ssize_t (*real)(int, struct msghdr *, int);
  if (!real) real = dlsym(RTLD_NEXT, "recvmsg");
  load();
  if (nrecs == 0 || !is_netlink(fd)) return real(fd, msg, flags);
  if (pending_len < 0) {
    static unsigned char raw[1 << 20];
    struct iovec iov = { raw, sizeof raw };
    struct msghdr m = { &pending_addr, sizeof pending_addr, &iov, 1, NULL, 0, 0 };
    ssize_t n = real(fd, &m, flags & ~(MSG_PEEK | MSG_TRUNC));
    if (n < 0) return n;
    transform(raw, n);
  }
  size_t cap = msg->msg_iovlen ? msg->msg_iov[0].iov_len : 0;
  size_t c = (size_t)pending_len < cap ? (size_t)pending_len : cap;
  if (c) memcpy(msg->msg_iov[0].iov_base, pending, c);
  if (msg->msg_name && msg->msg_namelen >= sizeof pending_addr) { memcpy(msg->msg_name, &pending_addr, sizeof pending_addr); msg->msg_namelen = sizeof pending_addr; }
  msg->msg_flags = c < (size_t)pending_len ? MSG_TRUNC : 0;
  ssize_t ret = (flags & MSG_TRUNC) ? pending_len : (ssize_t)c;
  if (!(flags & MSG_PEEK)) pending_len = -1;
  return ret;
}
