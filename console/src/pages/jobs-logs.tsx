// A job's logs (GET /job/{id}/logs): one block per resource (the driver of each try; pods on k8s). The API
// pages each log by line offset (`from`, `logSize`) and does not say how long a log is, so the view first
// reads forward to the end, keeping the last lines; older lines are fetched on request, and while the job
// runs the tail is polled from where each log ended.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get } from '../api';
import type { JobLogEntry } from '../types';
import { Button, ErrorBox, Loading, errorText, useInterval } from '../ui';
import { end, merge, pollFrom, prependOlder, type LogView, type Views } from './jobs-logs-model';

/** Lines read per request while catching up or polling. */
const CHUNK = 1000;
/** Lines kept per resource after catching up; older ones come back on request. */
const KEEP = 300;
/** Lines fetched by one "older lines" click. */
const OLDER = 200;
const POLL_MS = 3000;

const fetchLogs = (jobId: string, from: number, logSize: number) =>
  get<JobLogEntry[]>(`/job/${encodeURIComponent(jobId)}/logs`, { from, logSize });

export function JobLogs({ jobId, running }: { jobId: string; running: boolean }) {
  const [views, setViews] = useState<Views>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const polling = useRef(false);

  // Catch up: read forward in chunks until every log returns a short page, keeping the last KEEP lines.
  useEffect(() => {
    let stop = false;
    (async () => {
      let acc: Views = {};
      for (let from = 0, round = 0; round < 30 && !stop; round++, from += CHUNK) {
        const entries = await fetchLogs(jobId, from, CHUNK);
        acc = merge(acc, entries, KEEP);
        if (!entries.some((e) => e.logSize >= CHUNK)) break;
      }
      if (!stop) setViews(acc);
    })().catch((err: unknown) => !stop && setError(errorText(err)));
    return () => {
      stop = true;
    };
  }, [jobId]);

  const poll = async () => {
    if (!views || polling.current) return;
    polling.current = true;
    try {
      const entries = await fetchLogs(jobId, pollFrom(views), CHUNK);
      setViews((old) => merge(old ?? {}, entries));
      setError(undefined);
    } catch (err) {
      setError(errorText(err));
    } finally {
      polling.current = false;
    }
  };
  useInterval(() => void (running && poll()), POLL_MS);
  // One last read once the job has ended, for the lines written after the previous poll.
  const wasRunning = useRef(running);
  useEffect(() => {
    if (wasRunning.current && !running) void poll();
    wasRunning.current = running;
  }, [running]);

  const older = async (v: LogView) => {
    setBusy(true);
    try {
      const from = Math.max(0, v.start - OLDER);
      const entries = await fetchLogs(jobId, from, v.start - from);
      const e = entries.find((x) => x.name === v.name);
      if (e) setViews((old) => old && prependOlder(old, e));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  if (!views) return error ? <ErrorBox error={error} /> : <Loading what="Reading the logs" />;
  const list = Object.values(views);
  return (
    <div class="job-logs">
      <ErrorBox error={error} />
      {list.length === 0 && <p class="muted">No logs: the job has no driver yet, or its cluster keeps none for it.</p>}
      {list.map((v) => (
        <LogBlock key={v.name} view={v} busy={busy} onOlder={() => void older(v)} following={running} />
      ))}
    </div>
  );
}

function LogBlock({
  view,
  busy,
  onOlder,
  following,
}: {
  view: LogView;
  busy: boolean;
  onOlder: () => void;
  following: boolean;
}) {
  const pre = useRef<HTMLPreElement>(null);
  const atBottom = useRef(true);
  // Follow the tail while the reader is at the bottom; leave the scroll alone when they scrolled up.
  useEffect(() => {
    const p = pre.current;
    if (p && atBottom.current) p.scrollTop = p.scrollHeight;
  }, [view.lines.length]);
  return (
    <section class="log-block" aria-label={`log of ${view.role} ${view.name}`}>
      <header class="log-head">
        <strong>
          {view.role} <code>{view.name}</code>
        </strong>
        <span class="muted num">
          {view.state} · lines {view.lines.length ? `${view.start + 1}–${end(view)}` : 'none'}
          {following ? ' · following' : ''}
        </span>
        {view.start > 0 && (
          <Button onClick={onOlder} busy={busy}>
            Show {Math.min(OLDER, view.start)} older lines
          </Button>
        )}
      </header>
      <pre
        ref={pre}
        class="pre log-pre"
        tabIndex={0}
        aria-label={`log lines of ${view.name}`}
        onScroll={(e) => {
          const p = e.currentTarget;
          atBottom.current = p.scrollHeight - p.scrollTop - p.clientHeight < 24;
        }}
      >
        {view.lines.join('\n') || ' '}
      </pre>
    </section>
  );
}
