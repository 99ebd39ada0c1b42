/**
 * The seccomp program, run through a small classic-BPF interpreter (the subset it uses: absolute word loads,
 * JEQ/JGE against constants, returns): the refused calls answer EPERM, everything else is allowed, another ABI
 * is ENOSYS, on both architectures the filter knows. (That the kernel applies it is the escape suite's part:
 * pidfd_getfd and ptrace refused inside the sandbox.)
 */
import { describe, expect, it } from 'vitest';
import { DENIED_SYSCALLS, seccompFilter } from './sandbox-seccomp.js';

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const X64 = 0xc000003e;
const ARM64 = 0xc00000b7;
const I386 = 0x40000003;

function run(program: Buffer, data: { nr: number; arch: number }): number {
  const word = (offset: number) => (offset === 0 ? data.nr : offset === 4 ? data.arch : NaN);
  let acc = 0;
  for (let pc = 0; pc < program.length / 8; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) acc = word(k);
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >>> 0 >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected opcode ${code}`);
  }
  throw new Error('fell off the end of the program');
}

describe('the seccomp filter', () => {
  it('on x86-64: refuses the calls that reach into another process, allows the rest, refuses other ABIs', () => {
    const p = seccompFilter('x64')!;
    for (const nr of [101, 310, 311, 438, 312, 250, 321, 425, 165, 272, 308]) expect(run(p, { nr, arch: X64 }), `nr ${nr}`).toBe(EPERM);
    for (const nr of [0, 1, 2, 9, 56, 57, 59, 61, 231, 434, 435]) expect(run(p, { nr, arch: X64 }), `nr ${nr}`).toBe(ALLOW);
    expect(run(p, { nr: 0x40000000 + 101, arch: X64 })).toBe(ENOSYS);
    expect(run(p, { nr: 0x40000000, arch: X64 })).toBe(ENOSYS);
    expect(run(p, { nr: 26, arch: I386 })).toBe(ENOSYS);
  });

  it('on arm64: the same calls by their own numbers', () => {
    const p = seccompFilter('arm64')!;
    for (const nr of [117, 270, 271, 438, 272, 219, 280, 425, 40, 97, 268]) expect(run(p, { nr, arch: ARM64 }), `nr ${nr}`).toBe(EPERM);
    for (const nr of [63, 64, 56, 57, 220, 221, 222, 101, 434]) expect(run(p, { nr, arch: ARM64 }), `nr ${nr}`).toBe(ALLOW);
    expect(run(p, { nr: 117, arch: X64 })).toBe(ENOSYS);
  });

  it('names what it refuses, and has no program for an architecture whose numbers it does not know', () => {
    expect(DENIED_SYSCALLS).toEqual(expect.arrayContaining(['ptrace', 'process_vm_readv', 'process_vm_writev', 'pidfd_getfd', 'bpf', 'userfaultfd', 'io_uring_setup', 'unshare', 'setns']));
    expect(seccompFilter('ia32')).toBeUndefined();
    expect(seccompFilter('riscv64')).toBeUndefined();
  });
});
