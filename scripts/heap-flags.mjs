// V8 flags the server runs with under `npm start` and `npm run bench` (docs/performance.md, "Memory"): a fixed
// young generation (16 MiB semi-spaces from the start instead of growing from 1 MiB and shrinking again), so
// RSS under steady load stays flat instead of swinging with V8's resizing, and short-lived request garbage
// dies in fewer, regular scavenges.
export const HEAP_FLAGS = ['--min-semi-space-size=16', '--max-semi-space-size=16'];
