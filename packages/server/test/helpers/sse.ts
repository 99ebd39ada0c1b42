/** Reads a text/event-stream response into its frames (the JSON in each `data:`), with the event names. */
export async function readSse(res: Response): Promise<Array<{ event: string; frame: any }>> {
  const text = await res.text();
  const out: Array<{ event: string; frame: any }> = [];
  for (const block of text.split('\n\n')) {
    if (!block.trim()) continue;
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
    const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    out.push({ event, frame: JSON.parse(data) });
  }
  return out;
}
