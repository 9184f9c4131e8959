/* file_check.c — what a plugin file must be before dlopen sees it. dlopen maps a file's segments
 * as its program headers say: a truncated file then faults (SIGBUS) when the loader touches a
 * page past its end, and takes the host down. Reading the headers first costs a few hundred
 * bytes and turns that into a reason on the listing: regular file, ELF, 64-bit little-endian
 * shared object for this machine, every program header and every loaded segment inside the file. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry_internal.h"

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#define HOST_MACHINE_NAME "x86-64"
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#define HOST_MACHINE_NAME "aarch64"
#elif defined(__riscv) && __riscv_xlen == 64
#define HOST_MACHINE EM_RISCV
#define HOST_MACHINE_NAME "riscv64"
#else
#define HOST_MACHINE EM_NONE /* unknown: the machine is not checked */
#define HOST_MACHINE_NAME "this machine"
#endif

static const char *machine_name(unsigned m) {
  switch (m) {
  case EM_X86_64: return "x86-64";
  case EM_386: return "i386";
  case EM_AARCH64: return "aarch64";
  case EM_ARM: return "arm";
  case EM_RISCV: return "riscv";
  case EM_PPC64: return "ppc64";
  case EM_S390: return "s390";
  default: return NULL;
  }
}

/* pread of exactly n bytes at off; false on a short read. */
static bool read_at(int fd, void *buf, size_t n, off_t off) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += (size_t)r;
  }
  return true;
}

bool plugin_file_check(const char *path, char *why, size_t cap) {
  /* O_NOFOLLOW is not used: plugin directories may hold links to the real files (install trees);
   * what is checked is the file opened, and dlopen opens the same path right after. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    snprintf(why, cap, "cannot open: %s", strerror(errno));
    return false;
  }
  bool ok = false;
  struct stat st;
  Elf64_Ehdr eh;
  if (fstat(fd, &st) != 0) {
    snprintf(why, cap, "cannot stat: %s", strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    snprintf(why, cap, "not a regular file");
  } else if ((uint64_t)st.st_size < sizeof eh || !read_at(fd, &eh, sizeof eh, 0)) {
    snprintf(why, cap, "not a shared object: %lld bytes, shorter than an ELF header", (long long)st.st_size);
  } else if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    snprintf(why, cap, "not a shared object: no ELF header");
  } else if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    snprintf(why, cap, "not a 64-bit little-endian ELF object (class %u, data %u)", (unsigned)eh.e_ident[EI_CLASS],
             (unsigned)eh.e_ident[EI_DATA]);
  } else if (eh.e_type != ET_DYN) {
    snprintf(why, cap, "an ELF object of type %u, not a shared object", (unsigned)eh.e_type);
  } else if (HOST_MACHINE != EM_NONE && eh.e_machine != HOST_MACHINE) {
    const char *m = machine_name(eh.e_machine);
    if (m)
      snprintf(why, cap, "built for %s, this host is %s", m, HOST_MACHINE_NAME);
    else
      snprintf(why, cap, "built for machine %u (ELF e_machine), this host is %s", (unsigned)eh.e_machine,
               HOST_MACHINE_NAME);
  } else if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
             eh.e_phoff > (uint64_t)st.st_size ||
             (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > (uint64_t)st.st_size - eh.e_phoff) {
    snprintf(why, cap, "truncated or damaged: %u program headers at offset %llu do not fit in %lld bytes",
             (unsigned)eh.e_phnum, (unsigned long long)eh.e_phoff, (long long)st.st_size);
  } else {
    ok = true;
    for (unsigned i = 0; ok && i < eh.e_phnum; i++) {
      Elf64_Phdr ph;
      if (!read_at(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph))) {
        snprintf(why, cap, "truncated: program header %u cannot be read", i);
        ok = false;
      } else if ((ph.p_type == PT_LOAD || ph.p_type == PT_DYNAMIC) &&
                 (ph.p_offset > (uint64_t)st.st_size || ph.p_filesz > (uint64_t)st.st_size - ph.p_offset)) {
        snprintf(why, cap, "truncated: segment %u (%s) needs bytes up to %llu, the file has %lld", i,
                 ph.p_type == PT_LOAD ? "loaded" : "dynamic", (unsigned long long)(ph.p_offset + ph.p_filesz),
                 (long long)st.st_size);
        ok = false;
      }
    }
  }
  close(fd);
  return ok;
}
