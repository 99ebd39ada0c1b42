/**
 * The seccomp filter the code under verification runs under (handed to the inner bwrap with `--seccomp`):
 * a classic-BPF program, built here without libseccomp, that answers EPERM to the system calls that reach
 * into another process (ptrace, process_vm_*, pidfd_getfd, kcmp, process_madvise) or widen the kernel's
 * surface (keyrings, bpf, perf, userfaultfd, io_uring, modules, kexec, mounts, namespaces, handles), and
 * refuses every other ABI (i386, x32) outright. Everything else is allowed: toolchains must keep working.
 */

const AUDIT_ARCH_X86_64 = 0xc000003e;
const AUDIT_ARCH_AARCH64 = 0xc00000b7;
const X32_SYSCALL_BIT = 0x40000000;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;

// classic BPF opcodes
const LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K

/** The refused calls by name, with their numbers on each architecture the filter knows. */
const DENIED: Record<string, { x64: number; arm64: number }> = {
  ptrace: { x64: 101, arm64: 117 },
  process_vm_readv: { x64: 310, arm64: 270 },
  process_vm_writev: { x64: 311, arm64: 271 },
  pidfd_getfd: { x64: 438, arm64: 438 },
  process_madvise: { x64: 440, arm64: 440 },
  kcmp: { x64: 312, arm64: 272 },
  add_key: { x64: 248, arm64: 217 },
  request_key: { x64: 249, arm64: 218 },
  keyctl: { x64: 250, arm64: 219 },
  bpf: { x64: 321, arm64: 280 },
  perf_event_open: { x64: 298, arm64: 241 },
  userfaultfd: { x64: 323, arm64: 282 },
  io_uring_setup: { x64: 425, arm64: 425 },
  io_uring_enter: { x64: 426, arm64: 426 },
  io_uring_register: { x64: 427, arm64: 427 },
  init_module: { x64: 175, arm64: 105 },
  finit_module: { x64: 313, arm64: 273 },
  delete_module: { x64: 176, arm64: 106 },
  kexec_load: { x64: 246, arm64: 104 },
  kexec_file_load: { x64: 320, arm64: 294 },
  mount: { x64: 165, arm64: 40 },
  umount2: { x64: 166, arm64: 39 },
  pivot_root: { x64: 155, arm64: 41 },
  open_tree: { x64: 428, arm64: 428 },
  move_mount: { x64: 429, arm64: 429 },
  fsopen: { x64: 430, arm64: 430 },
  fsconfig: { x64: 431, arm64: 431 },
  fsmount: { x64: 432, arm64: 432 },
  fspick: { x64: 433, arm64: 433 },
  mount_setattr: { x64: 442, arm64: 442 },
  unshare: { x64: 272, arm64: 97 },
  setns: { x64: 308, arm64: 268 },
  open_by_handle_at: { x64: 304, arm64: 265 },
  name_to_handle_at: { x64: 303, arm64: 264 },
  acct: { x64: 163, arm64: 89 },
  swapon: { x64: 167, arm64: 224 },
  swapoff: { x64: 168, arm64: 225 },
  reboot: { x64: 169, arm64: 142 },
  syslog: { x64: 103, arm64: 116 },
  quotactl: { x64: 179, arm64: 60 },
  fanotify_init: { x64: 300, arm64: 262 },
};

/** The names of the refused system calls (for the docs and the tests). */
export const DENIED_SYSCALLS = Object.freeze(Object.keys(DENIED));

interface Insn { code: number; jt: number; jf: number; k: number }

/** The filter for this machine's architecture, or undefined where the filter does not know the system call numbers. */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const native = arch === 'x64' ? AUDIT_ARCH_X86_64 : arch === 'arm64' ? AUDIT_ARCH_AARCH64 : undefined;
  if (native === undefined) return undefined;
  const numbers = [...new Set(Object.values(DENIED).map((n) => (arch === 'x64' ? n.x64 : n.arm64)))];
  const deny = SECCOMP_RET_ERRNO | EPERM;
  const program: Insn[] = [
    { code: LD_W_ABS, jt: 0, jf: 0, k: 4 }, // seccomp_data.arch
    { code: JEQ_K, jt: 1, jf: 0, k: native },
    { code: RET_K, jt: 0, jf: 0, k: SECCOMP_RET_ERRNO | ENOSYS }, // another ABI (i386 via int 0x80, …)
    { code: LD_W_ABS, jt: 0, jf: 0, k: 0 }, // seccomp_data.nr
  ];
  if (arch === 'x64') program.push({ code: JGE_K, jt: numbers.length + 2, jf: 0, k: X32_SYSCALL_BIT }); // x32 → the ENOSYS at the very end
  // Each refused number jumps to the EPERM return at the end; the fall-through allows.
  numbers.forEach((nr, i) => program.push({ code: JEQ_K, jt: numbers.length - i, jf: 0, k: nr }));
  program.push({ code: RET_K, jt: 0, jf: 0, k: SECCOMP_RET_ALLOW });
  program.push({ code: RET_K, jt: 0, jf: 0, k: deny });
  if (arch === 'x64') program.push({ code: RET_K, jt: 0, jf: 0, k: SECCOMP_RET_ERRNO | ENOSYS });
  const out = Buffer.alloc(program.length * 8);
  program.forEach((insn, i) => {
    out.writeUInt16LE(insn.code, i * 8);
    out.writeUInt8(insn.jt, i * 8 + 2);
    out.writeUInt8(insn.jf, i * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return out;
}
