/** Named calls made one at a time, then all at once, each with how long it took to answer. */
export async function timeEach<T>(calls: Array<[string, () => Promise<T>]>): Promise<Array<{ name: string; res: T; ms: number }>> {
  const timed = async ([name, call]: [string, () => Promise<T>]) => {
    const started = Date.now();
    const res = await call();
    return { name, res, ms: Date.now() - started };
  };
  const results = [];
  for (const c of calls) results.push(await timed(c));
  results.push(...(await Promise.all(calls.map(timed))));
  return results;
}
