// Follows a job's SSE stream (GET /job/updates?<filter>, e.g. a tag only it carries, so the stream is open
// before the job is submitted and its first state is seen) through API restarts: when the connection
// drops it comes back with the last event id (Last-Event-ID), so the API resumes after it and no state
// is missed. Records the states in the order they came and counts 5xx answers.

export interface JobFollower {
  /** States in the order the stream gave them (consecutive repeats folded). */
  states: string[];
  /** 5xx answers to (re)connections; other failures (refused while the API restarts) are retried. */
  http5xx: number;
  reconnects: number;
  /** Resolves once the API has subscribed the first connection (its `: connected` comment came). */
  connected: Promise<void>;
  close(): void;
  /** Cuts the current connection only: the follower reconnects (to the URL `url` gives then) with Last-Event-ID. */
  cut(): void;
}

/** `url`: the API, or a function asked at each (re)connection (a client behind several APIs). */
export function followJob(url: string | (() => string), filter: string): JobFollower {
  let isConnected!: () => void;
  const connected = new Promise<void>((r) => (isConnected = r));
  const ac = new AbortController();
  let current: AbortController | undefined;
  const f: JobFollower = {
    states: [],
    http5xx: 0,
    reconnects: 0,
    connected,
    close: () => ac.abort(),
    cut: () => current?.abort(),
  };
  let lastId: string | undefined;
  const onEvent = (data: string) => {
    try {
      const state = (JSON.parse(data) as { state?: string }).state;
      if (state && f.states[f.states.length - 1] !== state) f.states.push(state);
    } catch {
      // not a job
    }
  };
  void (async () => {
    while (!ac.signal.aborted) {
      try {
        current = new AbortController();
        const base = typeof url === 'string' ? url : url();
        const res = await fetch(`${base}/job/updates?${filter}`, {
          headers: lastId ? { 'last-event-id': lastId } : {},
          signal: AbortSignal.any([ac.signal, current.signal]),
        });
        if (res.status >= 500) f.http5xx++;
        if (res.ok && res.body)
          await readEvents(res.body, (id, data) => ((lastId = id ?? lastId), onEvent(data)), isConnected);
      } catch {
        // refused or cut off: the API is restarting
      }
      if (ac.signal.aborted) return;
      f.reconnects++;
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return f;
}

async function readEvents(
  body: ReadableStream<Uint8Array>,
  onEvent: (id: string | undefined, data: string) => void,
  onComment: (text: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) onComment(line.slice(1).trim());
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length) onEvent(id, data.join('\n'));
    }
  }
}
