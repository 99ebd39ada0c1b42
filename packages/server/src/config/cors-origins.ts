/** CODELOOM_CORS_ORIGINS entries that are not `*` or a bare origin (scheme://host[:port]), one line each. */
export function corsOriginProblems(origins: readonly string[] | undefined): string[] {
  const problems: string[] = [];
  for (const o of origins ?? []) {
    if (o === '*') continue;
    let url: URL | undefined;
    try { url = new URL(o); } catch { /* reported below */ }
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== o.replace(/\/$/, '')) {
      problems.push(`CODELOOM_CORS_ORIGINS: "${o}" is not an origin (scheme, host and optional port, e.g. https://app.example.com; or * for any)`);
    }
  }
  return problems;
}
